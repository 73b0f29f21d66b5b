#pragma once

#include <cstddef>
#include <string>

#include "measure/measurement_state.hpp"
#include "measure/stopping_criterion.hpp"

namespace kforge::measure {

// A limit: stops once each side holds max_samples samples, converged or not.
class MaxSamplesCriterion final : public StoppingCriterion {
 public:
  // Throws std::invalid_argument if max_samples == 0.
  explicit MaxSamplesCriterion(std::size_t max_samples);

  std::string name() const override;
  bool should_stop(const MeasurementState& state) const override;
  std::string reason() const override;

  std::size_t max_samples() const { return max_samples_; }

 private:
  std::size_t max_samples_;
};

}  // namespace kforge::measure
