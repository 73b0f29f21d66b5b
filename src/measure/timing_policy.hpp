#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "measure/measurement_state.hpp"
#include "measure/noise_target_criterion.hpp"
#include "measure/round_size.hpp"
#include "measure/stopping_criterion.hpp"

namespace kforge::measure {

struct TimingPolicyConfig {
  double noise_target = 0.01;                      // Relative median-CI half-width that counts as converged.
  std::size_t min_samples = 20;                    // Per side, before convergence may be declared.
  std::size_t max_samples = 2000;                  // Per side; a limit, reached without converging.
  double time_budget_s = 10.0;                     // A limit on measurement wall time.
  std::size_t warmup_samples = 3;                  // Run and discarded by the runner before the first round.
  std::size_t samples_per_round = 10;              // Per side per round; see choose_samples_per_round().
  double round_target_ms = kDefaultRoundTargetMs;  // Round length choose_samples_per_round() aims at.
};

// Throws std::invalid_argument naming the first nonsensical field (e.g. max_samples < min_samples).
void validate(const TimingPolicyConfig& config);

struct StopDecision {
  std::string criterion;  // name() of the criterion that fired, e.g. "time-budget".
  // Why, with numbers: "noise 0.8% <= 1% target after 60 samples" or
  // "time budget 10 s reached with noise 2.3% > 1%".
  std::string message;
  // True only when the noise target was met; false means a limit cut measurement short and the
  // result is a best effort whose noise exceeds the target.
  bool converged;
  double relative_noise;  // worst_side_relative_noise() at the stop.
  std::size_t samples_per_side;
};

// Decides after each round whether to stop. Convergence (the noise target) is checked first so a
// converged measurement is always reported as such; then the limits in order: max samples, time
// budget, then any added with add_limit().
class TimingPolicy {
 public:
  // Throws std::invalid_argument if validate(config) does.
  explicit TimingPolicy(TimingPolicyConfig config = {});

  // Appends a pluggable limit. Limits never count as convergence, whatever the noise.
  void add_limit(std::unique_ptr<StoppingCriterion> limit);

  // nullopt: keep measuring.
  std::optional<StopDecision> check(const MeasurementState& state) const;

  const TimingPolicyConfig& config() const { return config_; }

 private:
  StopDecision converged_decision(const MeasurementState& state) const;
  StopDecision limit_decision(const StoppingCriterion& limit, const MeasurementState& state) const;
  std::string noise_shortfall(double noise, std::size_t samples_per_side) const;

  TimingPolicyConfig config_;
  NoiseTargetCriterion convergence_;
  std::vector<std::unique_ptr<StoppingCriterion>> limits_;
};

}  // namespace kforge::measure
