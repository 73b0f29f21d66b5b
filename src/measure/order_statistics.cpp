#include "measure/order_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kforge::measure {
namespace {

// Two-sided 95%: each tail of the binomial rank distribution may hold at most 2.5%.
constexpr double kTailProbability = 0.025;
constexpr double kNormalQuantile975 = 1.959963984540054;

// Largest lower rank j with P(Binomial(n, 1/2) <= j - 1) <= 2.5%, or 0 when even j = 1 fails.
std::size_t exact_lower_rank(std::size_t sample_count) {
  // 0.5^n stays a normal double for n <= kExactMedianCiRankLimit, so the recurrence is exact enough.
  double probability_mass = std::pow(0.5, static_cast<double>(sample_count));
  double cumulative = 0.0;
  for (std::size_t below = 0; below < sample_count; ++below) {
    cumulative += probability_mass;
    if (cumulative > kTailProbability) {
      return below;
    }
    probability_mass *= static_cast<double>(sample_count - below) / static_cast<double>(below + 1);
  }
  return sample_count;
}

// floor(n/2 - 1.96 * sqrt(n) / 2), the usual normal approximation of the same rank.
std::size_t approximate_lower_rank(std::size_t sample_count) {
  const auto n = static_cast<double>(sample_count);
  const double rank = std::floor(n / 2.0 - kNormalQuantile975 * std::sqrt(n) / 2.0);
  return rank < 0.0 ? 0 : static_cast<std::size_t>(rank);
}

}  // namespace

double interpolated_quantile(std::span<const double> sorted_samples, double probability) {
  if (sorted_samples.empty()) {
    throw std::invalid_argument("quantile of an empty sample set");
  }
  if (!(probability >= 0.0 && probability <= 1.0)) {
    throw std::invalid_argument("quantile probability must lie in [0, 1]");
  }
  const double position = probability * static_cast<double>(sorted_samples.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted_samples.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted_samples[below] + fraction * (sorted_samples[above] - sorted_samples[below]);
}

MedianCiRanks median_ci_ranks(std::size_t sample_count) {
  if (sample_count == 0) {
    throw std::invalid_argument("median confidence interval of zero samples");
  }
  const std::size_t lower_rank = sample_count <= kExactMedianCiRankLimit
                                     ? exact_lower_rank(sample_count)
                                     : approximate_lower_rank(sample_count);
  const bool meets_confidence = lower_rank >= 1;
  const std::size_t clamped_lower = std::clamp<std::size_t>(lower_rank, 1, sample_count);
  // The binomial is symmetric, so the upper rank mirrors the lower one.
  return MedianCiRanks{clamped_lower, sample_count + 1 - clamped_lower, meets_confidence};
}

}  // namespace kforge::measure
