#include "measure/process_spread.hpp"

#include <algorithm>
#include <cmath>

namespace kforge::measure {
namespace {

constexpr double kMicrosecondsPerMillisecond = 1000.0;
constexpr double kTwoSided95 = 1.959964;
// Below a nanosecond the model means nothing; clamp so a degenerate median cannot produce infinity.
constexpr double kSmallestMicroseconds = 0.001;

}  // namespace

double process_relative_sd(double median_ms) {
  const double microseconds = std::max(kSmallestMicroseconds, median_ms * kMicrosecondsPerMillisecond);
  return kProcessSpreadFloor + kProcessSpreadAtOneMicrosecond / std::sqrt(microseconds);
}

SpeedupEstimate with_process_spread(const SpeedupEstimate& within_process, double reference_median_ms,
                                    double candidate_median_ms) {
  const double reference_sd = process_relative_sd(reference_median_ms);
  const double candidate_sd = process_relative_sd(candidate_median_ms);
  const double process_half_width = kTwoSided95 * std::hypot(reference_sd, candidate_sd);
  const double estimate = within_process.speedup;
  const double lower = std::log(estimate / within_process.ci_low);
  const double upper = std::log(within_process.ci_high / estimate);
  SpeedupEstimate widened = within_process;
  widened.ci_low = estimate * std::exp(-std::hypot(std::max(0.0, lower), process_half_width));
  widened.ci_high = estimate * std::exp(std::hypot(std::max(0.0, upper), process_half_width));
  return widened;
}

}  // namespace kforge::measure
