#pragma once

#include <cstddef>
#include <span>

namespace kforge::measure {

// Quantile of ascending-sorted samples by linear interpolation between closest ranks
// (Hyndman-Fan type 7, numpy's default): position (n - 1) * probability, 0-based.
// Throws std::invalid_argument for empty input or a probability outside [0, 1].
double interpolated_quantile(std::span<const double> sorted_samples, double probability);

// 1-based ranks (lower_rank, upper_rank) of the order statistics that bound a distribution-free
// 95% confidence interval of the median: [x_(lower_rank), x_(upper_rank)].
struct MedianCiRanks {
  std::size_t lower_rank;
  std::size_t upper_rank;
  // False when no pair of order statistics reaches 95% coverage (n <= 5): the ranks are then
  // clamped to [1, n], and the interval [min, max] covers the median less often than claimed.
  bool meets_confidence;
};

// Sample counts up to this use exact Binomial(n, 1/2) tails; larger ones use the normal
// approximation, which there matches the exact ranks or is one rank wider (conservative).
inline constexpr std::size_t kExactMedianCiRankLimit = 1000;

// Ranks of the 95% median confidence interval for n samples. Throws std::invalid_argument if n == 0.
MedianCiRanks median_ci_ranks(std::size_t sample_count);

}  // namespace kforge::measure
