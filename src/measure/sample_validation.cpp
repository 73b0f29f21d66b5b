#include "measure/sample_validation.hpp"

#include <cmath>
#include <string>

namespace kforge::measure {

NonFiniteSampleError::NonFiniteSampleError(std::size_t index, double value)
    : std::invalid_argument("timing sample " + std::to_string(index) + " is not finite (" +
                            std::to_string(value) + ")"),
      index_(index),
      value_(value) {}

void require_finite_samples(std::span<const double> samples) {
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!std::isfinite(samples[i])) {
      throw NonFiniteSampleError(i, samples[i]);
    }
  }
}

void require_positive_times(std::span<const double> samples_ms) {
  require_finite_samples(samples_ms);
  for (std::size_t i = 0; i < samples_ms.size(); ++i) {
    if (samples_ms[i] <= 0.0) {
      throw std::invalid_argument("timing sample " + std::to_string(i) + " is not positive (" +
                                  std::to_string(samples_ms[i]) + " ms)");
    }
  }
}

}  // namespace kforge::measure
