#include "source/text_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kforge::source {

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::error_code error;
  if (!stream || std::filesystem::is_directory(path, error)) {
    const int reason = errno;
    throw std::runtime_error(
        "cannot read " + path.string() + ": " +
        (std::filesystem::is_directory(path, error) ? "it is a folder" : std::strerror(reason)));
  }
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

}  // namespace kforge::source
