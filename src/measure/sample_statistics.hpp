#pragma once

#include <cstddef>
#include <span>

namespace kforge::measure {

// Distribution summary of one side's per-sample times (milliseconds, though nothing here
// depends on the unit).
struct SampleSummary {
  std::size_t count;
  double median;
  double mean;
  double stddev;  // Sample standard deviation (n - 1 denominator); 0 for a single sample.
  double min;
  double max;
  double p25;
  double p75;
  // Distribution-free 95% confidence interval of the median, from order statistics.
  double median_ci_low;
  double median_ci_high;
  // Half-width of the median CI over the median: the quantity the stopping rule drives down.
  // +infinity when it cannot be trusted: no samples, fewer than 6 samples (no order-statistic
  // interval reaches 95% coverage), or a non-positive median (no relative scale).
  double relative_noise;
};

// Summarizes samples in O(n log n). Quantiles use linear interpolation (type 7).
// Non-finite samples are rejected with NonFiniteSampleError (see sample_validation.hpp), never
// dropped. Empty input is a normal state before the first round, so it does not throw: it yields
// count == 0, NaN statistics and relative_noise == +infinity.
SampleSummary summarize(std::span<const double> samples);

}  // namespace kforge::measure
