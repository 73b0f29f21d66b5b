#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <vector>

#include "measure/sample_statistics.hpp"
#include "measure/sample_validation.hpp"
#include "measure/speedup_estimate.hpp"

namespace kforge::measure {
namespace measure_speedup_estimate_test {

// Exponential(1) by inverse CDF from raw generator bits: the same draws on every standard library.
double exponential_draw(std::mt19937_64& rng) {
  const double uniform = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return -std::log1p(-uniform);
}

// Kernel-like times: a fixed floor plus an exponential tail, all scaled by duration_ms.
std::vector<double> kernel_times(std::mt19937_64& rng, std::size_t count, double duration_ms) {
  std::vector<double> samples(count);
  for (double& sample : samples) {
    sample = duration_ms * (1.0 + 0.1 * exponential_draw(rng));
  }
  return samples;
}

bool contains(const SpeedupEstimate& estimate, double value) {
  return estimate.ci_low <= value && value <= estimate.ci_high;
}

TEST(EstimateSpeedup, IdenticalDistributionsGiveAboutOne) {
  std::mt19937_64 rng(11);
  const std::vector<double> reference = kernel_times(rng, 500, 2.0);
  const std::vector<double> candidate = kernel_times(rng, 500, 2.0);
  const SpeedupEstimate estimate = estimate_speedup(reference, candidate);
  EXPECT_NEAR(estimate.speedup, 1.0, 0.02);
  EXPECT_TRUE(contains(estimate, 1.0)) << estimate.ci_low << " .. " << estimate.ci_high;
  EXPECT_TRUE(contains(estimate, estimate.speedup));
  EXPECT_EQ(estimate.bootstrap_resamples, 2000U);
}

TEST(EstimateSpeedup, SameSamplesGiveExactlyOne) {
  std::mt19937_64 rng(12);
  const std::vector<double> samples = kernel_times(rng, 100, 1.0);
  EXPECT_DOUBLE_EQ(estimate_speedup(samples, samples).speedup, 1.0);
}

TEST(EstimateSpeedup, FasterCandidateIsDetected) {
  std::mt19937_64 rng(13);
  const std::vector<double> reference = kernel_times(rng, 400, 2.5);
  const std::vector<double> candidate = kernel_times(rng, 400, 2.0);
  const SpeedupEstimate estimate = estimate_speedup(reference, candidate);
  EXPECT_NEAR(estimate.speedup, 1.25, 0.03);
  EXPECT_TRUE(contains(estimate, 1.25)) << estimate.ci_low << " .. " << estimate.ci_high;
  EXPECT_GT(estimate.ci_low, 1.0);
}

TEST(EstimateSpeedup, SlowerCandidateIsBelowOne) {
  std::mt19937_64 rng(14);
  const std::vector<double> reference = kernel_times(rng, 400, 1.0);
  const std::vector<double> candidate = kernel_times(rng, 400, 1.5);
  const SpeedupEstimate estimate = estimate_speedup(reference, candidate);
  EXPECT_NEAR(estimate.speedup, 1.0 / 1.5, 0.02);
  EXPECT_LT(estimate.ci_high, 1.0);
}

TEST(EstimateSpeedup, PointEstimateIsRatioOfSummaryMedians) {
  std::mt19937_64 rng(15);
  const std::vector<double> reference = kernel_times(rng, 64, 3.0);  // even counts: averaged middles
  const std::vector<double> candidate = kernel_times(rng, 33, 1.0);
  EXPECT_DOUBLE_EQ(estimate_speedup(reference, candidate).speedup,
                   summarize(reference).median / summarize(candidate).median);
}

TEST(EstimateSpeedup, ConstantSamplesGiveADegenerateInterval) {
  const SpeedupEstimate estimate =
      estimate_speedup(std::vector<double>(20, 3.0), std::vector<double>(20, 1.5), {.resamples = 50});
  EXPECT_DOUBLE_EQ(estimate.speedup, 2.0);
  EXPECT_DOUBLE_EQ(estimate.ci_low, 2.0);
  EXPECT_DOUBLE_EQ(estimate.ci_high, 2.0);
  EXPECT_EQ(estimate.bootstrap_resamples, 50U);
}

TEST(EstimateSpeedup, SameSeedReproducesAndOtherSeedDiffers) {
  std::mt19937_64 rng(16);
  const std::vector<double> reference = kernel_times(rng, 200, 1.0);
  const std::vector<double> candidate = kernel_times(rng, 200, 1.0);
  const SpeedupEstimate first = estimate_speedup(reference, candidate);
  const SpeedupEstimate again = estimate_speedup(reference, candidate);
  EXPECT_EQ(first.ci_low, again.ci_low);
  EXPECT_EQ(first.ci_high, again.ci_high);
  const SpeedupEstimate reseeded = estimate_speedup(reference, candidate, {.seed = 99});
  EXPECT_EQ(reseeded.speedup, first.speedup);
  EXPECT_NE(reseeded.ci_low, first.ci_low);
}

TEST(EstimateSpeedup, IntervalCoversTrueSpeedupInMostTrials) {
  // A sanity check on the percentile bootstrap, not a precise coverage claim.
  std::mt19937_64 rng(17);
  const int trials = 200;
  int covered = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const std::vector<double> reference = kernel_times(rng, 100, 1.2);
    const std::vector<double> candidate = kernel_times(rng, 100, 1.0);
    covered += contains(estimate_speedup(reference, candidate, {.resamples = 500}), 1.2) ? 1 : 0;
  }
  EXPECT_NEAR(static_cast<double>(covered) / trials, 0.95, 0.05);
}

TEST(EstimateSpeedup, RejectsEmptySides) {
  const std::vector<double> samples{1.0, 2.0};
  EXPECT_THROW(estimate_speedup(std::vector<double>{}, samples), std::invalid_argument);
  EXPECT_THROW(estimate_speedup(samples, std::vector<double>{}), std::invalid_argument);
}

TEST(EstimateSpeedup, RejectsNonPositiveAndNonFiniteTimes) {
  const std::vector<double> good{1.0, 2.0};
  EXPECT_THROW(estimate_speedup(good, std::vector<double>{1.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(estimate_speedup(std::vector<double>{-1.0}, good), std::invalid_argument);
  EXPECT_THROW(estimate_speedup(good, std::vector<double>{std::nan("")}), NonFiniteSampleError);
}

TEST(EstimateSpeedup, RejectsZeroResamples) {
  const std::vector<double> good{1.0, 2.0};
  EXPECT_THROW(estimate_speedup(good, good, {.resamples = 0}), std::invalid_argument);
}

}  // namespace measure_speedup_estimate_test
}  // namespace kforge::measure
