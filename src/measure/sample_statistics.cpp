#include "measure/sample_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "measure/order_statistics.hpp"
#include "measure/sample_validation.hpp"

namespace kforge::measure {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfinity = std::numeric_limits<double>::infinity();

SampleSummary empty_summary() {
  return SampleSummary{0, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kInfinity};
}

double mean_of(std::span<const double> samples) {
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

// Two-pass form: summing squared deviations from the mean avoids the cancellation of E[x^2] - E[x]^2.
double sample_stddev(std::span<const double> samples, double mean) {
  if (samples.size() < 2) {
    return 0.0;
  }
  double squared_deviations = 0.0;
  for (const double sample : samples) {
    squared_deviations += (sample - mean) * (sample - mean);
  }
  return std::sqrt(squared_deviations / static_cast<double>(samples.size() - 1));
}

double relative_half_width(double ci_low, double ci_high, double median, bool ci_meets_confidence) {
  if (!ci_meets_confidence || !(median > 0.0)) {
    return kInfinity;
  }
  return (ci_high - ci_low) / 2.0 / median;
}

}  // namespace

SampleSummary summarize(std::span<const double> samples) {
  require_finite_samples(samples);
  if (samples.empty()) {
    return empty_summary();
  }
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());

  const MedianCiRanks ranks = median_ci_ranks(sorted.size());
  SampleSummary summary{};
  summary.count = sorted.size();
  summary.median = interpolated_quantile(sorted, 0.5);
  summary.mean = mean_of(sorted);
  summary.stddev = sample_stddev(sorted, summary.mean);
  summary.min = sorted.front();
  summary.max = sorted.back();
  summary.p25 = interpolated_quantile(sorted, 0.25);
  summary.p75 = interpolated_quantile(sorted, 0.75);
  summary.median_ci_low = sorted[ranks.lower_rank - 1];
  summary.median_ci_high = sorted[ranks.upper_rank - 1];
  summary.relative_noise = relative_half_width(summary.median_ci_low, summary.median_ci_high, summary.median,
                                               ranks.meets_confidence);
  return summary;
}

}  // namespace kforge::measure
