#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/max_samples_criterion.hpp"
#include "measure/measurement_state.hpp"
#include "measure/noise_target_criterion.hpp"
#include "measure/sample_validation.hpp"
#include "measure/stopping_criterion.hpp"
#include "measure/time_budget_criterion.hpp"

namespace kforge::measure {
namespace measure_stopping_criteria_test {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// 20 samples whose median is 100 and whose 95% median CI [x_(6), x_(15)] is 100 -+ half_width.
std::vector<double> twenty_samples_with_ci_half_width(double half_width) {
  std::vector<double> samples{90, 90, 90, 90, 90, 100 - half_width};
  samples.insert(samples.end(), 8, 100.0);
  samples.push_back(100 + half_width);
  samples.insert(samples.end(), 5, 110.0);
  return samples;
}

MeasurementState state_with(const std::vector<double>& reference, const std::vector<double>& candidate) {
  MeasurementState state;
  state.record_round(reference, candidate);
  return state;
}

TEST(MeasurementState, RecordRoundAppendsBothSidesAndCountsRounds) {
  MeasurementState state;
  state.record_round(std::vector<double>{1.0, 2.0}, std::vector<double>{3.0, 4.0});
  state.record_round(std::vector<double>{5.0}, std::vector<double>{6.0});
  EXPECT_EQ(state.reference_samples_ms, (std::vector<double>{1.0, 2.0, 5.0}));
  EXPECT_EQ(state.candidate_samples_ms, (std::vector<double>{3.0, 4.0, 6.0}));
  EXPECT_EQ(state.rounds_completed, 2U);
  EXPECT_EQ(state.samples_per_side(), 3U);
}

TEST(MeasurementState, NonFiniteRoundLeavesStateUntouched) {
  MeasurementState state;
  state.record_round(std::vector<double>{1.0}, std::vector<double>{1.0});
  EXPECT_THROW(state.record_round(std::vector<double>{2.0}, std::vector<double>{std::nan("")}),
               NonFiniteSampleError);
  EXPECT_EQ(state.reference_samples_ms.size(), 1U);
  EXPECT_EQ(state.candidate_samples_ms.size(), 1U);
  EXPECT_EQ(state.rounds_completed, 1U);
}

TEST(MeasurementState, NonPositiveRoundLeavesStateUntouched) {
  MeasurementState state;
  EXPECT_THROW(state.record_round(std::vector<double>{0.0}, std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_TRUE(state.reference_samples_ms.empty());
  EXPECT_TRUE(state.candidate_samples_ms.empty());
  EXPECT_EQ(state.rounds_completed, 0U);
}

TEST(MeasurementState, SamplesPerSideIsTheSmallerSide) {
  MeasurementState state;
  state.reference_samples_ms = {1.0, 2.0, 3.0};
  state.candidate_samples_ms = {1.0};
  EXPECT_EQ(state.samples_per_side(), 1U);
}

TEST(WorstSideRelativeNoise, TakesTheNoisierSide) {
  const MeasurementState state =
      state_with(twenty_samples_with_ci_half_width(0.5), twenty_samples_with_ci_half_width(2.0));
  EXPECT_DOUBLE_EQ(worst_side_relative_noise(state), 0.02);
}

TEST(WorstSideRelativeNoise, IsUnboundedWithoutSamples) {
  EXPECT_EQ(worst_side_relative_noise(MeasurementState{}), kInfinity);
}

TEST(NoiseTargetCriterion, WaitsForMinimumSamplesEvenWithoutNoise) {
  const NoiseTargetCriterion criterion;  // 1% target, 20 samples
  EXPECT_FALSE(criterion.should_stop(state_with(std::vector<double>(19, 1.0), std::vector<double>(19, 1.0))));
  EXPECT_TRUE(criterion.should_stop(state_with(std::vector<double>(20, 1.0), std::vector<double>(20, 1.0))));
}

TEST(NoiseTargetCriterion, StopsAtOrBelowTargetOnly) {
  const NoiseTargetCriterion criterion(0.01, 20);
  const std::vector<double> at_target = twenty_samples_with_ci_half_width(1.0);
  const std::vector<double> above_target = twenty_samples_with_ci_half_width(1.5);
  EXPECT_TRUE(criterion.should_stop(state_with(at_target, at_target)));
  EXPECT_FALSE(criterion.should_stop(state_with(above_target, above_target)));
}

TEST(NoiseTargetCriterion, NoisierSideDecides) {
  const NoiseTargetCriterion criterion(0.01, 20);
  const std::vector<double> quiet(20, 1.0);
  const std::vector<double> noisy = twenty_samples_with_ci_half_width(5.0);
  EXPECT_FALSE(criterion.should_stop(state_with(quiet, noisy)));
  EXPECT_FALSE(criterion.should_stop(state_with(noisy, quiet)));
}

TEST(NoiseTargetCriterion, DescribesItself) {
  const NoiseTargetCriterion criterion(0.005, 30);
  EXPECT_EQ(criterion.name(), "noise-target");
  EXPECT_EQ(criterion.reason(), "noise <= 0.5% target with >= 30 samples per side");
  EXPECT_DOUBLE_EQ(criterion.target(), 0.005);
  EXPECT_EQ(criterion.min_samples(), 30U);
}

TEST(NoiseTargetCriterion, RejectsNonsense) {
  EXPECT_THROW(NoiseTargetCriterion{0.0}, std::invalid_argument);
  EXPECT_THROW(NoiseTargetCriterion{-0.01}, std::invalid_argument);
  EXPECT_THROW(NoiseTargetCriterion{std::nan("")}, std::invalid_argument);
  EXPECT_THROW(NoiseTargetCriterion{kInfinity}, std::invalid_argument);
  EXPECT_THROW((NoiseTargetCriterion{0.01, 0}), std::invalid_argument);
}

TEST(TimeBudgetCriterion, StopsOnceBudgetIsSpent) {
  const TimeBudgetCriterion criterion(10.0);
  MeasurementState state;
  state.elapsed_s = 9.99;
  EXPECT_FALSE(criterion.should_stop(state));
  state.elapsed_s = 10.0;
  EXPECT_TRUE(criterion.should_stop(state));
  EXPECT_EQ(criterion.name(), "time-budget");
  EXPECT_EQ(criterion.reason(), "time budget 10 s reached");
}

TEST(TimeBudgetCriterion, InfiniteBudgetNeverStops) {
  MeasurementState state;
  state.elapsed_s = 1e9;
  EXPECT_FALSE(TimeBudgetCriterion(kInfinity).should_stop(state));
}

TEST(TimeBudgetCriterion, RejectsNonPositiveBudgets) {
  EXPECT_THROW(TimeBudgetCriterion{0.0}, std::invalid_argument);
  EXPECT_THROW(TimeBudgetCriterion{-1.0}, std::invalid_argument);
  EXPECT_THROW(TimeBudgetCriterion{std::nan("")}, std::invalid_argument);
}

TEST(MaxSamplesCriterion, StopsAtTheCap) {
  const MaxSamplesCriterion criterion(2000);
  EXPECT_FALSE(
      criterion.should_stop(state_with(std::vector<double>(1999, 1.0), std::vector<double>(1999, 1.0))));
  EXPECT_TRUE(
      criterion.should_stop(state_with(std::vector<double>(2000, 1.0), std::vector<double>(2000, 1.0))));
  EXPECT_EQ(criterion.name(), "max-samples");
  EXPECT_EQ(criterion.reason(), "2000 samples per side reached");
}

TEST(MaxSamplesCriterion, RejectsZero) { EXPECT_THROW(MaxSamplesCriterion{0}, std::invalid_argument); }

TEST(StoppingCriterion, CriteriaArePluggableThroughTheBase) {
  std::vector<std::unique_ptr<StoppingCriterion>> criteria;
  criteria.push_back(std::make_unique<NoiseTargetCriterion>());
  criteria.push_back(std::make_unique<MaxSamplesCriterion>(5));
  criteria.push_back(std::make_unique<TimeBudgetCriterion>(1.0));
  const MeasurementState state =
      state_with(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{1, 2, 3, 4, 5});
  std::vector<std::string> fired;
  for (const auto& criterion : criteria) {
    if (criterion->should_stop(state)) {
      fired.push_back(criterion->name());
    }
  }
  EXPECT_EQ(fired, (std::vector<std::string>{"max-samples"}));
}

}  // namespace measure_stopping_criteria_test
}  // namespace kforge::measure
