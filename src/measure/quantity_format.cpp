#include "measure/quantity_format.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <system_error>

namespace kforge::measure {
namespace {

constexpr int kSignificantDigits = 3;
// From here on 3 significant digits would switch to exponent form ("1.23e+03").
constexpr double kWholeNumberThreshold = 1000.0;

}  // namespace

std::string format_significant(double value) {
  // Holds any double in either form: at most 309 integer digits plus sign.
  std::array<char, 320> buffer{};
  char* const first = buffer.data();
  char* const last = first + buffer.size();
  const bool whole_number = std::isfinite(value) && std::abs(value) >= kWholeNumberThreshold;
  const auto [end, error] =
      whole_number ? std::to_chars(first, last, value, std::chars_format::fixed, 0)
                   : std::to_chars(first, last, value, std::chars_format::general, kSignificantDigits);
  if (error != std::errc{}) {
    return "?";
  }
  return {first, end};
}

std::string format_percent(double fraction) { return format_significant(fraction * 100.0) + "%"; }

}  // namespace kforge::measure
