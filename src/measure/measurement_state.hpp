#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace kforge::measure {

// Everything measured so far in one reference-versus-candidate comparison: the input that
// stopping criteria judge. Warmup samples are discarded by the runner and never recorded here.
struct MeasurementState {
  std::vector<double> reference_samples_ms;
  std::vector<double> candidate_samples_ms;
  std::size_t rounds_completed = 0;
  double elapsed_s = 0.0;  // Wall time since measurement began, as seen by the runner.

  // Appends one alternating round's batches and counts the round. Rejects a bad round before
  // changing anything, so a broken timer fails at the round that exposed it: NonFiniteSampleError
  // for a NaN or infinite time, std::invalid_argument for a time <= 0 (see require_positive_times).
  void record_round(std::span<const double> reference_batch_ms, std::span<const double> candidate_batch_ms);

  // Samples both sides have; rounds keep the sides equal, so this is also each side's count.
  std::size_t samples_per_side() const;
};

}  // namespace kforge::measure
