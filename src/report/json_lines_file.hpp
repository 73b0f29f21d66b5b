#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace kforge::report {

// A JSON Lines results file (--results), written one line per finished result and flushed at once, so a
// run that is killed keeps every line it wrote.
class JsonLinesFile {
 public:
  // Truncates `path`; std::runtime_error when it cannot be written.
  explicit JsonLinesFile(const std::string& path);
  void append(const nlohmann::json& line);

 private:
  std::ofstream out_;
};

}  // namespace kforge::report
