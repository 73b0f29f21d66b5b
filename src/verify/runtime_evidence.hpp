#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rules/analysis_context.hpp"
#include "rules/finding.hpp"
#include "verify/reference_parity.hpp"

namespace kforge::verify {

// What the candidate process recorded around each forward call (python/kforge/worker/trace.py),
// and what the judge knows about the problem. Runtime findings are computed from it here, in the
// supervisor, so the rules that turn a trace into a verdict are not in the candidate's hands.
struct RuntimeEvidence {
  std::vector<nlohmann::json> traces;             // one per traced call, in order
  std::vector<std::string> problem_float_dtypes;  // floating dtypes of the problem's inputs
  bool on_gpu = false;
  // The reference's own PyTorch work per call, when the reference is a Triton program (reference_parity).
  std::optional<ReferenceParity> reference;

  // Whether any trace ran work outside the candidate's Triton kernels that a Triton reference could
  // account for (ATen compute, library GPU kernels, host reads): then the judge traces its reference.
  bool ran_pytorch_work() const;

  // Smallest number of own Triton launches in one forward, over the traces after the first (the
  // first may hold autotuning launches); 0 when there is no trace.
  long own_launches_per_call() const;
  // Smallest GPU kernel time (µs, fills and copies excluded) of one forward, same traces.
  double gpu_kernel_time_us() const;
  // Share of GPU kernel time spent in the candidate's own Triton kernels, or null on the CPU.
  nlohmann::json time_coverage() const;
};

// Findings of the runtime checks on the traces: triton-kernel-ran, kernel-failure-swallowed,
// foreign-triton-kernel,
// torch-compute-at-runtime, non-triton-gpu-kernel, side-stream-launch, side-stream-gpu-work,
// threads-left-alive, precision-downgrade-runtime, host-transfer and kernel-constexpr-argument.
// (Modes left active are rejected by the candidate worker itself: dispatch-mode-tampering.) All reject, under
// every profile: they report what the candidate did, not a guess from its source (docs/threat-model.md).
std::vector<rules::Finding> runtime_findings(const RuntimeEvidence& evidence);

}  // namespace kforge::verify
