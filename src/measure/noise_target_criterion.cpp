#include "measure/noise_target_criterion.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "measure/quantity_format.hpp"
#include "measure/sample_statistics.hpp"

namespace kforge::measure {

double worst_side_relative_noise(const MeasurementState& state) {
  // relative_noise is never NaN (it is +infinity when unknown), so std::max is order-safe.
  return std::max(summarize(state.reference_samples_ms).relative_noise,
                  summarize(state.candidate_samples_ms).relative_noise);
}

NoiseTargetCriterion::NoiseTargetCriterion(double target, std::size_t min_samples)
    : target_(target), min_samples_(min_samples) {
  if (!std::isfinite(target) || target <= 0.0) {
    throw std::invalid_argument("noise target must be a finite positive fraction");
  }
  if (min_samples == 0) {
    throw std::invalid_argument("noise target needs min_samples >= 1");
  }
}

std::string NoiseTargetCriterion::name() const { return "noise-target"; }

bool NoiseTargetCriterion::should_stop(const MeasurementState& state) const {
  // The sample-count check comes first: it is free, and summarizing is not.
  return state.samples_per_side() >= min_samples_ && worst_side_relative_noise(state) <= target_;
}

std::string NoiseTargetCriterion::reason() const {
  return "noise <= " + format_percent(target_) + " target with >= " + std::to_string(min_samples_) +
         " samples per side";
}

}  // namespace kforge::measure
