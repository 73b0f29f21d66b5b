#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::profile {

// One kernel launch as Nsight Compute measured it: its name, launch shape and every metric it
// printed, in base units (bytes, nanoseconds, percent, counts).
struct NcuKernel {
  std::string name;
  std::string block_size;  // "(256, 1, 1)"
  std::string grid_size;   // "(8192, 1, 1)"
  std::map<std::string, double, std::less<>> metrics;

  // The metric's value, or nullopt when ncu did not print it (not collected, or not a number).
  [[nodiscard]] std::optional<double> metric(std::string_view metric_name) const;
};

// Parses `ncu --csv --page raw` output: a header row of column names, a row of units, one row per
// kernel launch. Lines before the header (the profiled program's own output, ==PROF== and
// ==WARNING== lines) are skipped; numbers may carry thousands separators ("3,364,384"); values in
// scaled units (Kbyte, usecond, ...) are converted to base units. Throws std::runtime_error saying
// what was expected when the text holds no such table.
std::vector<NcuKernel> parse_ncu_raw_csv(std::string_view text);

}  // namespace kforge::profile
