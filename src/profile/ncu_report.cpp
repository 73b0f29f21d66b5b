#include "profile/ncu_report.hpp"

#include <array>
#include <charconv>
#include <cstddef>
#include <stdexcept>
#include <utility>

namespace kforge::profile {
namespace {

// One CSV record (RFC 4180: quoted fields, doubled quotes inside them) starting at `position`;
// advances `position` past its line end.
std::vector<std::string> read_record(std::string_view text, std::size_t& position) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  while (position < text.size()) {
    const char c = text[position++];
    if (quoted) {
      if (c == '"' && position < text.size() && text[position] == '"') {
        fields.back() += '"';
        ++position;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

std::optional<double> parse_number(std::string_view text) {
  std::string digits;
  for (const char c : text) {
    if (c != ',') {
      digits += c;
    }
  }
  double value = 0;
  const auto* end = digits.data() + digits.size();
  const auto [stop, error] = std::from_chars(digits.data(), end, value);
  if (digits.empty() || error != std::errc() || stop != end) {
    return std::nullopt;
  }
  return value;
}

// Factor from a printed unit to its base unit (byte, nanosecond); 1 for everything else.
double unit_factor(std::string_view unit) {
  static constexpr std::array<std::pair<std::string_view, double>, 10> kScaled{{
      {"Kbyte", 1e3},
      {"Mbyte", 1e6},
      {"Gbyte", 1e9},
      {"Tbyte", 1e12},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"usecond", 1e3},
      {"msecond", 1e6},
      {"second", 1e9},
  }};
  for (const auto& [name, factor] : kScaled) {
    if (unit == name) {
      return factor;
    }
  }
  return 1.0;
}

std::size_t find_header(std::string_view text) {
  std::size_t line = 0;
  while (line < text.size()) {
    if (text.substr(line).starts_with("\"ID\",")) {
      return line;
    }
    const auto next = text.find('\n', line);
    if (next == std::string_view::npos) {
      break;
    }
    line = next + 1;
  }
  throw std::runtime_error(
      "no Nsight Compute table found: expected a line starting with \"ID\", as `ncu --csv --page raw` "
      "prints; check that ncu profiled at least one kernel (its log says ==PROF== ... and no ==ERROR==)");
}

}  // namespace

std::optional<double> NcuKernel::metric(std::string_view metric_name) const {
  const auto found = metrics.find(metric_name);
  if (found == metrics.end()) {
    return std::nullopt;
  }
  return found->second;
}

std::vector<NcuKernel> parse_ncu_raw_csv(std::string_view text) {
  std::size_t position = find_header(text);
  const auto header = read_record(text, position);
  const auto units = read_record(text, position);
  std::vector<NcuKernel> kernels;
  while (position < text.size()) {
    const auto row = read_record(text, position);
    if (row.size() != header.size()) {
      continue;  // a blank line, or program output printed after the table
    }
    NcuKernel kernel;
    for (std::size_t column = 0; column < header.size(); ++column) {
      const std::string& name = header[column];
      if (name == "Kernel Name") {
        kernel.name = row[column];
      } else if (name == "Block Size") {
        kernel.block_size = row[column];
      } else if (name == "Grid Size") {
        kernel.grid_size = row[column];
      } else if (name.find("__") != std::string::npos) {
        if (const auto value = parse_number(row[column])) {
          const double factor = column < units.size() ? unit_factor(units[column]) : 1.0;
          kernel.metrics.emplace(name, *value * factor);
        }
      }
    }
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

}  // namespace kforge::profile
