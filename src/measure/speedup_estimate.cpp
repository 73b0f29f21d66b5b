#include "measure/speedup_estimate.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/order_statistics.hpp"
#include "measure/sample_validation.hpp"

namespace kforge::measure {
namespace {

constexpr double kLowerPercentile = 0.025;
constexpr double kUpperPercentile = 0.975;
// 32-bit multiply-shift indexing and 32-bit draw counters both need fewer samples than this.
constexpr std::size_t kMaxSamplesPerSide = 0xFFFFFFFFU;

void require_timed_side(std::span<const double> samples_ms, const std::string& side) {
  if (samples_ms.empty()) {
    throw std::invalid_argument("speedup needs at least one " + side + " sample");
  }
  if (samples_ms.size() > kMaxSamplesPerSide) {
    throw std::invalid_argument("speedup bootstrap takes fewer than 2^32 " + side + " samples");
  }
  require_positive_times(samples_ms);
}

// Maps 32 random bits onto [0, count) by multiply-shift, avoiding a 64-bit division per draw.
// The non-uniformity is below count / 2^32 (2e-6 at 10k samples), far beneath bootstrap noise,
// and unlike std::uniform_int_distribution the mapping is the same on every standard library.
std::size_t scaled_index(std::uint64_t random_bits32, std::size_t count) {
  return static_cast<std::size_t>((random_bits32 * count) >> 32U);
}

// Bootstrap resampling of one side. Because the samples are sorted once up front, a resample's
// median is fixed by how often each sorted position was drawn: counting draws per position and
// walking the counts to the middle rank gives exactly the median nth_element would find on the
// resampled values, in O(n) streaming work with no value shuffling.
class SortedResampler {
 public:
  explicit SortedResampler(std::span<const double> samples)
      : sorted_(samples.begin(), samples.end()), draws_per_position_(samples.size()) {
    std::sort(sorted_.begin(), sorted_.end());
  }

  // Median of the whole sample; even counts average the two middle values like summarize().
  double median() const { return interpolated_quantile(sorted_, 0.5); }

  double resampled_median(std::mt19937_64& rng) {
    draw_resample(rng);
    return median_of_drawn();
  }

 private:
  void draw_resample(std::mt19937_64& rng) {
    std::fill(draws_per_position_.begin(), draws_per_position_.end(), 0U);
    const std::size_t count = sorted_.size();
    // Each 64-bit draw supplies two 32-bit indices, halving generator calls.
    for (std::size_t drawn = 0; drawn + 1 < count; drawn += 2) {
      const std::uint64_t bits = rng();
      ++draws_per_position_[scaled_index(bits >> 32U, count)];
      ++draws_per_position_[scaled_index(bits & 0xFFFFFFFFU, count)];
    }
    if (count % 2 == 1) {
      ++draws_per_position_[scaled_index(rng() >> 32U, count)];
    }
  }

  // Value at 0-based rank `rank` of the drawn resample, scanning on from (position, ranks_before).
  double value_at_rank(std::size_t rank, std::size_t& position, std::size_t& ranks_before) const {
    while (ranks_before + draws_per_position_[position] <= rank) {
      ranks_before += draws_per_position_[position];
      ++position;
    }
    return sorted_[position];
  }

  double median_of_drawn() const {
    const std::size_t count = sorted_.size();
    std::size_t position = 0;
    std::size_t ranks_before = 0;
    const double lower_middle = value_at_rank((count - 1) / 2, position, ranks_before);
    const double upper_middle = value_at_rank(count / 2, position, ranks_before);
    return lower_middle + 0.5 * (upper_middle - lower_middle);
  }

  std::vector<double> sorted_;
  std::vector<std::uint32_t> draws_per_position_;
};

}  // namespace

SpeedupEstimate estimate_speedup(std::span<const double> reference_samples,
                                 std::span<const double> candidate_samples, BootstrapOptions options) {
  require_timed_side(reference_samples, "reference");
  require_timed_side(candidate_samples, "candidate");
  if (options.resamples == 0) {
    throw std::invalid_argument("speedup bootstrap needs at least one resample");
  }

  SortedResampler reference(reference_samples);
  SortedResampler candidate(candidate_samples);
  std::mt19937_64 rng(options.seed);
  std::vector<double> ratios(options.resamples);
  for (double& ratio : ratios) {
    const double reference_median = reference.resampled_median(rng);
    ratio = reference_median / candidate.resampled_median(rng);
  }
  std::sort(ratios.begin(), ratios.end());

  return SpeedupEstimate{reference.median() / candidate.median(),
                         interpolated_quantile(ratios, kLowerPercentile),
                         interpolated_quantile(ratios, kUpperPercentile), options.resamples};
}

}  // namespace kforge::measure
