#include "runner/errno_name.hpp"

#include <fmt/format.h>

#include <cstring>

namespace kforge::runner {

std::string errno_name(int error) {
  const char* name = strerrorname_np(error);
  return name != nullptr ? std::string(name) : fmt::format("errno {}", error);
}

}  // namespace kforge::runner
