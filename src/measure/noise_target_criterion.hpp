#pragma once

#include <cstddef>
#include <string>

#include "measure/measurement_state.hpp"
#include "measure/stopping_criterion.hpp"

namespace kforge::measure {

// The larger relative_noise (see SampleSummary) of the two sides: a comparison is only as
// precise as its noisier side. +infinity while either side has too few samples to judge.
double worst_side_relative_noise(const MeasurementState& state);

// Converged: both sides have at least min_samples and worst_side_relative_noise <= target.
class NoiseTargetCriterion final : public StoppingCriterion {
 public:
  static constexpr double kDefaultTarget = 0.01;
  static constexpr std::size_t kDefaultMinSamples = 20;

  // Throws std::invalid_argument unless target is finite and positive and min_samples >= 1.
  explicit NoiseTargetCriterion(double target = kDefaultTarget, std::size_t min_samples = kDefaultMinSamples);

  std::string name() const override;
  bool should_stop(const MeasurementState& state) const override;
  std::string reason() const override;

  double target() const { return target_; }
  std::size_t min_samples() const { return min_samples_; }

 private:
  double target_;
  std::size_t min_samples_;
};

}  // namespace kforge::measure
