#pragma once

#include <string>
#include <vector>

#include "rules/finding.hpp"
#include "verify/runtime_evidence.hpp"

namespace kforge::verify {

// One `time` request to the candidate worker as the supervisor saw it: the wall time it measured
// itself around the call, and what the candidate reported.
struct TimedBatch {
  double wall_ms = 0.0;            // supervisor's steady clock around the whole request
  std::vector<double> samples_ms;  // the candidate's event timings
  long own_launches = -1;          // own Triton launches during the timed calls (-1: not reported)
  long calls = 0;                  // forward calls timed (samples and back-to-back calls)
  std::vector<std::string> replaced_timing_functions;  // timing functions the candidate patched
  long side_stream_launches = 0;                       // own launches on another stream while timed
  std::vector<std::string> input_attributes;           // state the timed calls left on input tensors
  double wall_ms_per_call = -1.0;                      // synchronised back-to-back calls (-1: not measured)
  double host_ms_per_call = -1.0;                      // the host's enqueue time of those calls
};

// The reference's back-to-back calls, measured in the same timing rounds as the candidate's: the control
// for GPU work of other processes (a batch's other evaluations and programs share the GPU, and a stopped
// program's queued kernels keep running), which lengthens both sides' wall-clock calls alike.
struct WallControl {
  double wall_ms_per_call = -1.0;  // the reference's median (-1: not measured)
  double host_ms_per_call = -1.0;  // its host enqueue time
  double timed_ms = 0.0;           // its median event time
};

// Cross-checks of the candidate's timing (docs/threat-model.md):
// - timer-tampering: timing functions replaced, or event times adding up to more than the supervisor's
//   wall clock;
// - timing-kernels-skipped: fewer own launches per timed call than in the correctness trials;
// - side-stream-launch: own Triton launches on another stream during the timed calls;
// - input-attributes: attributes or a .grad left on the input tensors by timed calls;
// - hidden-gpu-work: the profiler saw more GPU kernel time per forward than the timing events measured,
//   or the timed calls' own back-to-back wall time (synchronised on every stream) far exceeds both their
//   host enqueue time and their event time in every timing round: work on streams the events do not cover (it
//   would hide in the device sleep that precedes each sample). Unless the reference's own back-to-back calls
//   (`control`) show the same unexplained time in the same rounds: then the GPU was busy with other
//   processes' work, and the candidate is held only to what it adds beyond the reference's.
std::vector<rules::Finding> timing_integrity_findings(const std::vector<TimedBatch>& batches,
                                                      const RuntimeEvidence& evidence,
                                                      double candidate_median_ms,
                                                      const WallControl& control = {});

}  // namespace kforge::verify
