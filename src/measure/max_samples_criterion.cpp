#include "measure/max_samples_criterion.hpp"

#include <stdexcept>

namespace kforge::measure {

MaxSamplesCriterion::MaxSamplesCriterion(std::size_t max_samples) : max_samples_(max_samples) {
  if (max_samples == 0) {
    throw std::invalid_argument("max_samples must be at least 1");
  }
}

std::string MaxSamplesCriterion::name() const { return "max-samples"; }

bool MaxSamplesCriterion::should_stop(const MeasurementState& state) const {
  return state.samples_per_side() >= max_samples_;
}

std::string MaxSamplesCriterion::reason() const {
  return std::to_string(max_samples_) + " samples per side reached";
}

}  // namespace kforge::measure
