#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kforge::test_support {

// The whole of a file the tests read (a problem, a candidate, a captured profile); empty when the
// file cannot be read, which the test's own assertions then report.
inline std::string file_text(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// A file under tests/data/ncu/: Nsight Compute output and ceilings captured on an H100.
inline std::string ncu_fixture(const std::string& name) {
  return file_text(std::filesystem::path(KFORGE_SOURCE_DIR) / "tests" / "data" / "ncu" / name);
}

}  // namespace kforge::test_support
