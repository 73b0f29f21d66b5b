#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/sample_statistics.hpp"
#include "measure/sample_validation.hpp"

namespace kforge::measure {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Exponential(1) by inverse CDF from raw generator bits: the same draws on every standard library.
double exponential_draw(std::mt19937_64& rng) {
  const double uniform = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return -std::log1p(-uniform);
}

std::vector<double> exponential_samples(std::mt19937_64& rng, std::size_t count) {
  std::vector<double> samples(count);
  for (double& sample : samples) {
    sample = exponential_draw(rng);
  }
  return samples;
}

// Fraction of trials whose median CI contains the true median ln 2 of Exponential(1).
double median_ci_coverage(std::size_t sample_count, int trials) {
  std::mt19937_64 rng(20240601);
  int covered = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const SampleSummary summary = summarize(exponential_samples(rng, sample_count));
    covered +=
        summary.median_ci_low <= std::numbers::ln2 && std::numbers::ln2 <= summary.median_ci_high ? 1 : 0;
  }
  return static_cast<double>(covered) / static_cast<double>(trials);
}

TEST(Summarize, HandComputedTenSamples) {
  // Unsorted on purpose: summarize must sort a copy.
  const std::vector<double> samples{70, 10, 100, 40, 20, 90, 30, 60, 50, 80};
  const SampleSummary summary = summarize(samples);
  EXPECT_EQ(summary.count, 10U);
  EXPECT_DOUBLE_EQ(summary.median, 55.0);
  EXPECT_DOUBLE_EQ(summary.mean, 55.0);
  EXPECT_DOUBLE_EQ(summary.stddev, std::sqrt(8250.0 / 9.0));  // sum of squared deviations 8250
  EXPECT_DOUBLE_EQ(summary.min, 10.0);
  EXPECT_DOUBLE_EQ(summary.max, 100.0);
  EXPECT_DOUBLE_EQ(summary.p25, 32.5);
  EXPECT_DOUBLE_EQ(summary.p75, 77.5);
  // n = 10: 95% median CI is [x_(2), x_(9)].
  EXPECT_DOUBLE_EQ(summary.median_ci_low, 20.0);
  EXPECT_DOUBLE_EQ(summary.median_ci_high, 90.0);
  EXPECT_DOUBLE_EQ(summary.relative_noise, 35.0 / 55.0);
}

TEST(Summarize, HandComputedOddCount) {
  const std::vector<double> samples{3, 1, 2, 5, 4, 7, 6};
  const SampleSummary summary = summarize(samples);
  EXPECT_DOUBLE_EQ(summary.median, 4.0);
  EXPECT_DOUBLE_EQ(summary.p25, 2.5);  // position 1.5
  EXPECT_DOUBLE_EQ(summary.p75, 5.5);  // position 4.5
  // n = 7: 95% median CI is [x_(1), x_(7)].
  EXPECT_DOUBLE_EQ(summary.median_ci_low, 1.0);
  EXPECT_DOUBLE_EQ(summary.median_ci_high, 7.0);
  EXPECT_DOUBLE_EQ(summary.relative_noise, 3.0 / 4.0);
}

TEST(Summarize, TwentySamplesUseSixthAndFifteenthOrderStatistics) {
  // Sorted: five 90s, x_(6) = 99, eight 100s, x_(15) = 102, five 110s.
  const std::vector<double> samples{110, 90,  100, 102, 90,  100, 110, 100, 90,  100,
                                    99,  110, 100, 90,  100, 110, 100, 90,  100, 110};
  const SampleSummary summary = summarize(samples);
  EXPECT_DOUBLE_EQ(summary.median, 100.0);
  EXPECT_DOUBLE_EQ(summary.median_ci_low, 99.0);
  EXPECT_DOUBLE_EQ(summary.median_ci_high, 102.0);
  EXPECT_DOUBLE_EQ(summary.relative_noise, 0.015);
}

TEST(Summarize, ConstantSamplesHaveNoNoise) {
  const SampleSummary summary = summarize(std::vector<double>(30, 2.5));
  EXPECT_DOUBLE_EQ(summary.median, 2.5);
  EXPECT_DOUBLE_EQ(summary.stddev, 0.0);
  EXPECT_DOUBLE_EQ(summary.relative_noise, 0.0);
}

TEST(Summarize, FewerThanSixSamplesHaveUnboundedNoise) {
  // [min, max] covers the median less than 95% of the time here, so it must not pass a noise target.
  const SampleSummary summary = summarize(std::vector<double>{1.0, 1.0, 1.0, 1.0, 1.0});
  EXPECT_DOUBLE_EQ(summary.median_ci_low, 1.0);
  EXPECT_DOUBLE_EQ(summary.median_ci_high, 1.0);
  EXPECT_EQ(summary.relative_noise, kInfinity);
}

TEST(Summarize, SingleSample) {
  const SampleSummary summary = summarize(std::vector<double>{3.0});
  EXPECT_EQ(summary.count, 1U);
  EXPECT_DOUBLE_EQ(summary.median, 3.0);
  EXPECT_DOUBLE_EQ(summary.stddev, 0.0);
  EXPECT_DOUBLE_EQ(summary.p25, 3.0);
  EXPECT_EQ(summary.relative_noise, kInfinity);
}

TEST(Summarize, NonPositiveMedianHasNoRelativeNoise) {
  const SampleSummary summary = summarize(std::vector<double>(10, 0.0));
  EXPECT_EQ(summary.relative_noise, kInfinity);
}

TEST(Summarize, EmptyInputGivesNaNStatisticsAndUnboundedNoise) {
  const SampleSummary summary = summarize(std::vector<double>{});
  EXPECT_EQ(summary.count, 0U);
  EXPECT_TRUE(std::isnan(summary.median));
  EXPECT_TRUE(std::isnan(summary.mean));
  EXPECT_TRUE(std::isnan(summary.median_ci_low));
  EXPECT_EQ(summary.relative_noise, kInfinity);
}

TEST(Summarize, RejectsNaNNamingItsIndex) {
  const std::vector<double> samples{1.0, 2.0, std::nan(""), 4.0};
  try {
    summarize(samples);
    FAIL() << "expected NonFiniteSampleError";
  } catch (const NonFiniteSampleError& error) {
    EXPECT_EQ(error.index(), 2U);
    EXPECT_TRUE(std::isnan(error.value()));
    EXPECT_NE(std::string(error.what()).find("sample 2"), std::string::npos);
  }
}

TEST(Summarize, RejectsInfinities) {
  EXPECT_THROW(summarize(std::vector<double>{1.0, kInfinity}), NonFiniteSampleError);
  EXPECT_THROW(summarize(std::vector<double>{-kInfinity, 1.0}), NonFiniteSampleError);
}

TEST(Summarize, NonFiniteErrorIsAnInvalidArgument) {
  EXPECT_THROW(summarize(std::vector<double>{std::nan("")}), std::invalid_argument);
}

TEST(RequirePositiveTimes, AcceptsPositiveAndEmpty) {
  EXPECT_NO_THROW(require_positive_times(std::vector<double>{0.001, 5.0}));
  EXPECT_NO_THROW(require_positive_times(std::vector<double>{}));
}

TEST(RequirePositiveTimes, RejectsZeroNegativeAndNonFinite) {
  EXPECT_THROW(require_positive_times(std::vector<double>{1.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(require_positive_times(std::vector<double>{-2.0}), std::invalid_argument);
  EXPECT_THROW(require_positive_times(std::vector<double>{1.0, std::nan("")}), NonFiniteSampleError);
}

TEST(MedianCiCoverage, ExactRanksCoverTrueMedianAboutNinetyFivePercent) {
  // Exact coverage for n = 30 is 95.7%; 2000 trials put the estimate within about +-1%.
  EXPECT_NEAR(median_ci_coverage(30, 2000), 0.957, 0.02);
}

TEST(MedianCiCoverage, ApproximateRanksCoverTrueMedianAboutNinetyFivePercent) {
  // n = 1500 takes the normal-approximation branch; its coverage is 95.3%.
  EXPECT_NEAR(median_ci_coverage(1500, 400), 0.953, 0.03);
}

TEST(MedianCiCoverage, RelativeNoiseShrinksWithMoreSamples) {
  std::mt19937_64 rng(7);
  const double noise_100 = summarize(exponential_samples(rng, 100)).relative_noise;
  const double noise_1600 = summarize(exponential_samples(rng, 1600)).relative_noise;
  // Half-width scales as 1/sqrt(n): 16x the samples should give roughly a quarter of the noise.
  EXPECT_NEAR(noise_1600 / noise_100, 0.25, 0.1);
}

}  // namespace
}  // namespace kforge::measure
