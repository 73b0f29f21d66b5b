#include "report/json_lines_file.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace kforge::report {

JsonLinesFile::JsonLinesFile(const std::string& path) : out_(path, std::ios::binary | std::ios::trunc) {
  if (!out_) {
    throw std::runtime_error(fmt::format("cannot write the results file {}", path));
  }
}

void JsonLinesFile::append(const nlohmann::json& line) {
  out_ << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
}

}  // namespace kforge::report
