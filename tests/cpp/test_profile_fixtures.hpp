#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace kforge::profile {

// A file under tests/data/ncu/: Nsight Compute output and ceilings captured on an H100.
inline std::string ncu_fixture(const std::string& name) {
  std::ifstream file(std::string(KFORGE_SOURCE_DIR) + "/tests/data/ncu/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace kforge::profile
