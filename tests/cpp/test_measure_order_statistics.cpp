#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/order_statistics.hpp"

namespace kforge::measure {
namespace {

TEST(InterpolatedQuantile, InterpolatesBetweenClosestRanks) {
  const std::vector<double> sorted{10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
  EXPECT_DOUBLE_EQ(interpolated_quantile(sorted, 0.0), 10.0);
  EXPECT_DOUBLE_EQ(interpolated_quantile(sorted, 0.25), 32.5);  // position 2.25
  EXPECT_DOUBLE_EQ(interpolated_quantile(sorted, 0.5), 55.0);   // position 4.5
  EXPECT_DOUBLE_EQ(interpolated_quantile(sorted, 0.75), 77.5);  // position 6.75
  EXPECT_DOUBLE_EQ(interpolated_quantile(sorted, 1.0), 100.0);
}

TEST(InterpolatedQuantile, SingleSampleIsEveryQuantile) {
  const std::vector<double> sorted{4.0};
  EXPECT_DOUBLE_EQ(interpolated_quantile(sorted, 0.0), 4.0);
  EXPECT_DOUBLE_EQ(interpolated_quantile(sorted, 0.3), 4.0);
  EXPECT_DOUBLE_EQ(interpolated_quantile(sorted, 1.0), 4.0);
}

TEST(InterpolatedQuantile, RejectsEmptyInputAndBadProbability) {
  const std::vector<double> sorted{1.0, 2.0};
  EXPECT_THROW(interpolated_quantile(std::vector<double>{}, 0.5), std::invalid_argument);
  EXPECT_THROW(interpolated_quantile(sorted, -0.1), std::invalid_argument);
  EXPECT_THROW(interpolated_quantile(sorted, 1.1), std::invalid_argument);
  EXPECT_THROW(interpolated_quantile(sorted, std::nan("")), std::invalid_argument);
}

struct RankCase {
  std::size_t sample_count;
  std::size_t lower_rank;
  std::size_t upper_rank;
  bool meets_confidence;
};

// Readable failure output instead of gtest's byte dump.
void PrintTo(const RankCase& rank_case, std::ostream* out) { *out << "n = " << rank_case.sample_count; }

std::string rank_case_name(const testing::TestParamInfo<RankCase>& info) {
  // Built by insertion: "n" + std::to_string(...) trips a GCC 12 -Wrestrict false positive at -O3.
  std::string name = std::to_string(info.param.sample_count);
  name.insert(name.begin(), 'n');
  return name;
}

// Ranks from the exact Binomial(n, 1/2) tails (n <= 1000) and from n/2 -+ 1.96 sqrt(n)/2 beyond.
class MedianCiRanksTable : public testing::TestWithParam<RankCase> {};

TEST_P(MedianCiRanksTable, MatchesHandComputedRanks) {
  const RankCase expected = GetParam();
  const MedianCiRanks ranks = median_ci_ranks(expected.sample_count);
  EXPECT_EQ(ranks.lower_rank, expected.lower_rank);
  EXPECT_EQ(ranks.upper_rank, expected.upper_rank);
  EXPECT_EQ(ranks.meets_confidence, expected.meets_confidence);
}

INSTANTIATE_TEST_SUITE_P(
    HandComputed, MedianCiRanksTable,
    testing::Values(RankCase{1, 1, 1, false},   // no interval reaches 95%: clamped to [min, max]
                    RankCase{5, 1, 5, false},   // P([min, max] covers) = 1 - 2/32 = 93.75%
                    RankCase{6, 1, 6, true},    // 1 - 2/64 = 96.9%
                    RankCase{10, 2, 9, true},   // P(B <= 1) = 11/1024 <= 2.5% < P(B <= 2) = 56/1024
                    RankCase{20, 6, 15, true},  // P(B <= 5) = 21700/2^20 = 2.07%
                    RankCase{100, 40, 61, true}, RankCase{1000, 469, 532, true},
                    RankCase{1001, 469, 533, true},  // approximation: floor(500.5 - 31.0) = 469
                    RankCase{2000, 956, 1045, true}),
    rank_case_name);

TEST(MedianCiRanks, ExactRanksKeepAtLeastNinetyFivePercentCoverage) {
  for (std::size_t n = 6; n <= 200; ++n) {
    const MedianCiRanks ranks = median_ci_ranks(n);
    // Coverage is 1 - 2 P(B <= lower_rank - 1); sum that tail directly.
    double probability_mass = std::pow(0.5, static_cast<double>(n));
    double lower_tail = 0.0;
    for (std::size_t below = 0; below < ranks.lower_rank; ++below) {
      lower_tail += probability_mass;
      probability_mass *= static_cast<double>(n - below) / static_cast<double>(below + 1);
    }
    EXPECT_GE(1.0 - 2.0 * lower_tail, 0.95) << "n = " << n;
    EXPECT_EQ(ranks.lower_rank + ranks.upper_rank, n + 1) << "n = " << n;
  }
}

TEST(MedianCiRanks, ApproximationIsContinuousWithExactRanks) {
  const MedianCiRanks last_exact = median_ci_ranks(kExactMedianCiRankLimit);
  const MedianCiRanks first_approximate = median_ci_ranks(kExactMedianCiRankLimit + 1);
  EXPECT_LE(first_approximate.lower_rank - last_exact.lower_rank, 1U);
  EXPECT_LE(first_approximate.upper_rank - last_exact.upper_rank, 1U);
}

TEST(MedianCiRanks, RejectsZeroSamples) { EXPECT_THROW(median_ci_ranks(0), std::invalid_argument); }

}  // namespace
}  // namespace kforge::measure
