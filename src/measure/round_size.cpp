#include "measure/round_size.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kforge::measure {

std::size_t choose_samples_per_round(double single_sample_ms, double round_target_ms) {
  // Written as !(x >= 0) so NaN is rejected too.
  if (!(single_sample_ms >= 0.0)) {
    throw std::invalid_argument("single-sample estimate must be a non-negative time");
  }
  if (!(round_target_ms > 0.0) || std::isinf(round_target_ms)) {
    throw std::invalid_argument("round target must be a finite positive time");
  }
  // Division by zero gives +infinity, which the clamp turns into the maximum.
  const double ideal = round_target_ms / single_sample_ms;
  const double clamped = std::clamp(std::round(ideal), static_cast<double>(kMinSamplesPerRound),
                                    static_cast<double>(kMaxSamplesPerRound));
  return static_cast<std::size_t>(clamped);
}

}  // namespace kforge::measure
