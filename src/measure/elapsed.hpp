#pragma once

#include <chrono>

namespace kforge::measure {

// Wall seconds on the steady clock since start.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kforge::measure
