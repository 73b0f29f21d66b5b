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

void write_text_file(const std::filesystem::path& path, std::string_view text) {
  std::ofstream stream(path, std::ios::binary);
  stream.write(text.data(), static_cast<std::streamsize>(text.size()));
  stream.close();
  if (!stream) {
    const int reason = errno;
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(reason));
  }
}

}  // namespace kforge::source
