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
  long own_launches = -1;          // own Triton launches during the samples (-1: not reported)
  long calls = 0;                  // forward calls timed
  std::vector<std::string> replaced_timing_functions;  // timing functions the candidate patched
};

// Cross-checks of the candidate's timing (docs/threat-model.md): timer-tampering (timing functions
// replaced, or event times adding up to more than the supervisor's wall clock), timing-kernels-skipped (fewer
// own launches per call than in the correctness trials) and hidden-gpu-work (the profiler saw more GPU kernel
// time per forward than the timing events measured: work on streams the events do not cover).
std::vector<rules::Finding> timing_integrity_findings(const std::vector<TimedBatch>& batches,
                                                      const RuntimeEvidence& evidence,
                                                      double candidate_median_ms);

}  // namespace kforge::verify
