#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/measurement_state.hpp"
#include "measure/stopping_criterion.hpp"
#include "measure/timing_policy.hpp"

namespace kforge::measure {
namespace {

// 20 samples whose median is 100 and whose 95% median CI [x_(6), x_(15)] is 100 -+ half_width,
// interleaved so that any 10-sample round holds a mix.
std::vector<double> twenty_samples_with_ci_half_width(double half_width) {
  return {90,  100, 90,  100, 90,  100, 90,  100, 90,  100 - half_width,
          110, 100, 110, 100, 110, 100, 110, 100, 110, 100 + half_width};
}

MeasurementState state_with(const std::vector<double>& samples, double elapsed_s) {
  MeasurementState state;
  state.record_round(samples, samples);
  state.elapsed_s = elapsed_s;
  return state;
}

// Exponential(1) by inverse CDF from raw generator bits: the same draws on every standard library.
double exponential_draw(std::mt19937_64& rng) {
  const double uniform = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return -std::log1p(-uniform);
}

std::vector<double> kernel_round(std::mt19937_64& rng, std::size_t count, double tail_fraction) {
  std::vector<double> samples(count);
  for (double& sample : samples) {
    sample = 1.0 + tail_fraction * exponential_draw(rng);
  }
  return samples;
}

// Runs rounds of simulated 1 ms kernels, advancing the clock 50 ms a round, until the policy stops.
StopDecision run_until_stop(const TimingPolicy& policy, double tail_fraction, MeasurementState& state) {
  std::mt19937_64 rng(5);
  const std::size_t per_round = policy.config().samples_per_round;
  while (true) {
    state.record_round(kernel_round(rng, per_round, tail_fraction),
                       kernel_round(rng, per_round, tail_fraction));
    state.elapsed_s += 0.05;
    if (std::optional<StopDecision> decision = policy.check(state)) {
      return *decision;
    }
  }
}

// A user-supplied limit: stop after a given number of rounds.
class RoundLimit final : public StoppingCriterion {
 public:
  explicit RoundLimit(std::size_t rounds) : rounds_(rounds) {}
  std::string name() const override { return "round-limit"; }
  bool should_stop(const MeasurementState& state) const override { return state.rounds_completed >= rounds_; }
  std::string reason() const override { return std::to_string(rounds_) + " rounds reached"; }

 private:
  std::size_t rounds_;
};

TEST(TimingPolicyConfig, DefaultsMatchTheDocumentedPolicy) {
  const TimingPolicyConfig config;
  EXPECT_DOUBLE_EQ(config.noise_target, 0.01);
  EXPECT_EQ(config.min_samples, 20U);
  EXPECT_EQ(config.max_samples, 2000U);
  EXPECT_DOUBLE_EQ(config.time_budget_s, 10.0);
  EXPECT_EQ(config.warmup_samples, 3U);
  EXPECT_EQ(config.samples_per_round, 10U);
  EXPECT_DOUBLE_EQ(config.round_target_ms, 50.0);
  EXPECT_NO_THROW(validate(config));
}

TEST(TimingPolicyConfig, ValidateRejectsNonsense) {
  EXPECT_THROW(validate({.noise_target = 0.0}), std::invalid_argument);
  EXPECT_THROW(validate({.noise_target = std::nan("")}), std::invalid_argument);
  EXPECT_THROW(validate({.min_samples = 0}), std::invalid_argument);
  EXPECT_THROW(validate({.min_samples = 30, .max_samples = 20}), std::invalid_argument);
  EXPECT_THROW(validate({.time_budget_s = 0.0}), std::invalid_argument);
  EXPECT_THROW(validate({.samples_per_round = 0}), std::invalid_argument);
  EXPECT_THROW(validate({.round_target_ms = -1.0}), std::invalid_argument);
  EXPECT_THROW(TimingPolicy({.max_samples = 1}), std::invalid_argument);
}

TEST(TimingPolicy, KeepsMeasuringBeforeAnySample) {
  const TimingPolicy policy;
  EXPECT_FALSE(policy.check(MeasurementState{}).has_value());
}

TEST(TimingPolicy, ConvergesWithMessage) {
  const TimingPolicy policy;
  const std::optional<StopDecision> decision =
      policy.check(state_with(twenty_samples_with_ci_half_width(0.8), 1.0));
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->criterion, "noise-target");
  EXPECT_EQ(decision->message, "noise 0.8% <= 1% target after 20 samples");
  EXPECT_TRUE(decision->converged);
  EXPECT_NEAR(decision->relative_noise, 0.008, 1e-12);
  EXPECT_EQ(decision->samples_per_side, 20U);
}

TEST(TimingPolicy, TimeBudgetStopIsFlaggedNotConverged) {
  const TimingPolicy policy;
  const std::vector<double> noisy = twenty_samples_with_ci_half_width(2.3);
  EXPECT_FALSE(policy.check(state_with(noisy, 9.9)).has_value());
  const std::optional<StopDecision> decision = policy.check(state_with(noisy, 10.0));
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->criterion, "time-budget");
  EXPECT_EQ(decision->message, "time budget 10 s reached with noise 2.3% > 1%");
  EXPECT_FALSE(decision->converged);
}

TEST(TimingPolicy, ConvergenceWinsWhenEveryCriterionFires) {
  const TimingPolicy policy({.max_samples = 20});
  const std::optional<StopDecision> decision =
      policy.check(state_with(twenty_samples_with_ci_half_width(0.5), 60.0));
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->criterion, "noise-target");
  EXPECT_TRUE(decision->converged);
}

TEST(TimingPolicy, MaxSamplesIsCheckedBeforeTimeBudget) {
  const TimingPolicy policy({.max_samples = 20});
  const std::optional<StopDecision> decision =
      policy.check(state_with(twenty_samples_with_ci_half_width(3.0), 60.0));
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->criterion, "max-samples");
  EXPECT_EQ(decision->message, "20 samples per side reached with noise 3% > 1%");
  EXPECT_FALSE(decision->converged);
}

TEST(TimingPolicy, BudgetWithQuietButTooFewSamplesSaysWhatIsMissing) {
  const TimingPolicy policy;
  const std::optional<StopDecision> decision = policy.check(state_with(std::vector<double>(10, 1.0), 10.0));
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->message, "time budget 10 s reached with noise 0% but only 10 of 20 required samples");
  EXPECT_FALSE(decision->converged);
}

TEST(TimingPolicy, BudgetWithTooFewSamplesToMeasureNoise) {
  const TimingPolicy policy;
  const std::optional<StopDecision> decision =
      policy.check(state_with(std::vector<double>{1.0, 1.1, 1.2}, 10.0));
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->message, "time budget 10 s reached with noise not measurable after 3 samples");
}

TEST(TimingPolicy, BudgetWithNoSamples) {
  const TimingPolicy policy({.time_budget_s = 0.5});
  MeasurementState state;
  state.elapsed_s = 0.5;
  const std::optional<StopDecision> decision = policy.check(state);
  ASSERT_TRUE(decision.has_value());
  EXPECT_EQ(decision->message, "time budget 0.5 s reached with no samples");
  EXPECT_EQ(decision->samples_per_side, 0U);
}

TEST(TimingPolicy, AddedLimitsFireAfterBuiltInOnes) {
  TimingPolicy policy;
  policy.add_limit(std::make_unique<RoundLimit>(1));
  const std::vector<double> noisy = twenty_samples_with_ci_half_width(3.0);
  const std::optional<StopDecision> early = policy.check(state_with(noisy, 1.0));
  ASSERT_TRUE(early.has_value());
  EXPECT_EQ(early->criterion, "round-limit");
  EXPECT_EQ(early->message, "1 rounds reached with noise 3% > 1%");
  EXPECT_EQ(policy.check(state_with(noisy, 10.0))->criterion, "time-budget");
  EXPECT_THROW(policy.add_limit(nullptr), std::invalid_argument);
}

TEST(TimingPolicy, QuietKernelConvergesAsSoonAsMinimumSamplesArrive) {
  const TimingPolicy policy;
  MeasurementState state;
  const StopDecision decision = run_until_stop(policy, 0.001, state);
  EXPECT_TRUE(decision.converged);
  EXPECT_EQ(state.rounds_completed, 2U);  // 10 samples per round, 20 required
}

TEST(TimingPolicy, NoisyKernelRunsIntoTheTimeBudget) {
  const TimingPolicy policy({.time_budget_s = 1.0});
  MeasurementState state;
  const StopDecision decision = run_until_stop(policy, 1.0, state);
  EXPECT_EQ(decision.criterion, "time-budget");
  EXPECT_FALSE(decision.converged);
  EXPECT_GT(decision.relative_noise, 0.01);
  EXPECT_EQ(state.rounds_completed, 20U);  // 20 rounds of 50 ms
}

TEST(TimingPolicy, NoisyKernelWithoutBudgetRunsIntoMaxSamples) {
  const TimingPolicy policy({.max_samples = 300, .time_budget_s = 3600.0});
  MeasurementState state;
  const StopDecision decision = run_until_stop(policy, 1.0, state);
  EXPECT_EQ(decision.criterion, "max-samples");
  EXPECT_FALSE(decision.converged);
  EXPECT_EQ(state.samples_per_side(), 300U);
}

TEST(TimingPolicy, ModeratelyNoisyKernelConvergesAfterMoreRounds) {
  const TimingPolicy policy;
  MeasurementState state;
  const StopDecision decision = run_until_stop(policy, 0.1, state);
  EXPECT_TRUE(decision.converged);
  EXPECT_GT(state.rounds_completed, 2U);
  EXPECT_LE(decision.relative_noise, 0.01);
}

}  // namespace
}  // namespace kforge::measure
