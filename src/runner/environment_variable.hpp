#pragma once

#include <cstdlib>
#include <string>

namespace kforge::runner {

// The value of an environment variable, empty when unset. Batch worker threads call it too (sandbox
// policy, store keys); that is safe because kforge never sets or unsets a variable, and getenv only
// races with setenv/putenv.
inline std::string environment_variable(const char* name) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): kforge never modifies its environment
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// True when CUDA_VISIBLE_DEVICES hides every GPU ("" or "-1"), as CUDA itself reads it.
inline bool cuda_hidden_by_environment() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): kforge never modifies its environment
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible != nullptr && (*visible == '\0' || std::string(visible) == "-1");
}

}  // namespace kforge::runner
