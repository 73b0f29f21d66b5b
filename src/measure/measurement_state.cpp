#include "measure/measurement_state.hpp"

#include <algorithm>

#include "measure/sample_validation.hpp"

namespace kforge::measure {

void MeasurementState::record_round(std::span<const double> reference_batch_ms,
                                    std::span<const double> candidate_batch_ms) {
  // Validate both batches first so a bad round leaves the state untouched.
  require_positive_times(reference_batch_ms);
  require_positive_times(candidate_batch_ms);
  reference_samples_ms.insert(reference_samples_ms.end(), reference_batch_ms.begin(),
                              reference_batch_ms.end());
  candidate_samples_ms.insert(candidate_samples_ms.end(), candidate_batch_ms.begin(),
                              candidate_batch_ms.end());
  ++rounds_completed;
}

std::size_t MeasurementState::samples_per_side() const {
  return std::min(reference_samples_ms.size(), candidate_samples_ms.size());
}

}  // namespace kforge::measure
