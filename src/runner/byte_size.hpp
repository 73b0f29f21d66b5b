#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace kforge::runner {

// "512 MiB", "1.5 GiB": sizes in limits and memory verdicts, in the unit a person would pick. A verdict
// comparing two close sizes asks for more decimals, so 1.03 GiB is not shown as over a limit of 1.0.
inline std::string format_bytes(std::uint64_t bytes, int gib_decimals = 1) {
  constexpr double kMiB = 1024.0 * 1024.0;
  constexpr double kGiB = kMiB * 1024.0;
  const auto value = static_cast<double>(bytes);
  if (value >= kGiB) {
    return fmt::format("{:.{}f} GiB", value / kGiB, gib_decimals);
  }
  return fmt::format("{:.0f} MiB", value / kMiB);
}

}  // namespace kforge::runner
