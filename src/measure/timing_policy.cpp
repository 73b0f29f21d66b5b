#include "measure/timing_policy.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "measure/max_samples_criterion.hpp"
#include "measure/quantity_format.hpp"
#include "measure/time_budget_criterion.hpp"

namespace kforge::measure {

void validate(const TimingPolicyConfig& config) {
  if (!std::isfinite(config.noise_target) || config.noise_target <= 0.0) {
    throw std::invalid_argument("noise_target must be a finite positive fraction");
  }
  if (config.min_samples == 0) {
    throw std::invalid_argument("min_samples must be at least 1");
  }
  if (config.max_samples < config.min_samples) {
    throw std::invalid_argument("max_samples must be at least min_samples");
  }
  if (!(config.time_budget_s > 0.0)) {
    throw std::invalid_argument("time_budget_s must be positive");
  }
  if (config.samples_per_round == 0) {
    throw std::invalid_argument("samples_per_round must be at least 1");
  }
  if (!(config.round_target_ms > 0.0) || std::isinf(config.round_target_ms)) {
    throw std::invalid_argument("round_target_ms must be a finite positive time");
  }
}

namespace {

// Validates before any member is built, so a bad config reports the config-level message.
TimingPolicyConfig validated(TimingPolicyConfig config) {
  validate(config);
  return config;
}

}  // namespace

TimingPolicy::TimingPolicy(TimingPolicyConfig config)
    : config_(validated(config)), convergence_(config_.noise_target, config_.min_samples) {
  limits_.push_back(std::make_unique<MaxSamplesCriterion>(config_.max_samples));
  limits_.push_back(std::make_unique<TimeBudgetCriterion>(config_.time_budget_s));
}

void TimingPolicy::add_limit(std::unique_ptr<StoppingCriterion> limit) {
  if (limit == nullptr) {
    throw std::invalid_argument("cannot add a null stopping criterion");
  }
  limits_.push_back(std::move(limit));
}

std::optional<StopDecision> TimingPolicy::check(const MeasurementState& state) const {
  if (convergence_.should_stop(state)) {
    return converged_decision(state);
  }
  for (const auto& limit : limits_) {
    if (limit->should_stop(state)) {
      return limit_decision(*limit, state);
    }
  }
  return std::nullopt;
}

StopDecision TimingPolicy::converged_decision(const MeasurementState& state) const {
  const double noise = worst_side_relative_noise(state);
  const std::size_t samples = state.samples_per_side();
  return StopDecision{convergence_.name(),
                      "noise " + format_percent(noise) + " <= " + format_percent(config_.noise_target) +
                          " target after " + std::to_string(samples) + " samples",
                      true, noise, samples};
}

StopDecision TimingPolicy::limit_decision(const StoppingCriterion& limit,
                                          const MeasurementState& state) const {
  const double noise = worst_side_relative_noise(state);
  const std::size_t samples = state.samples_per_side();
  return StopDecision{limit.name(), limit.reason() + " with " + noise_shortfall(noise, samples), false, noise,
                      samples};
}

// Says which part of convergence is missing: samples at all, a measurable noise, the noise level,
// or (noise already fine) the minimum sample count.
std::string TimingPolicy::noise_shortfall(double noise, std::size_t samples_per_side) const {
  if (samples_per_side == 0) {
    return "no samples";
  }
  if (std::isinf(noise)) {
    return "noise not measurable after " + std::to_string(samples_per_side) + " samples";
  }
  if (noise > config_.noise_target) {
    return "noise " + format_percent(noise) + " > " + format_percent(config_.noise_target);
  }
  return "noise " + format_percent(noise) + " but only " + std::to_string(samples_per_side) + " of " +
         std::to_string(config_.min_samples) + " required samples";
}

}  // namespace kforge::measure
