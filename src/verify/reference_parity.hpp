#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kforge::verify {

// Counts per name: ATen ops, GPU kernels, host reads.
using NameCounts = std::map<std::string, long>;

// Readers of one traced call (python/kforge/worker/trace.py), shared by the candidate's checks and the
// reference's allowance:
// the {"name": count} object under `key` (empty when absent or malformed);
NameCounts counts_of(const nlohmann::json& trace, const char* key);
// the GPU kernels that are neither Triton kernels (own, or named like a launched one) nor fills/copies;
NameCounts library_kernels(const nlohmann::json& trace);
// the device-to-host copies CUPTI recorded (driver copy records named DtoH).
long device_to_host_copies(const nlohmann::json& trace);

// What a reference that is itself a Triton program (kernel mode, TritonBench, a problem.py whose Model
// launches kernels) runs around its own kernels in one call: the PyTorch work a candidate may run too.
// A gold file that sums its kernel's per-row losses with `.sum()` is not cheating when its own
// rewrite does the same; a candidate that computes more in PyTorch than the reference does is.
struct ReferenceParity {
  NameCounts aten_ops;             // ATen compute outside Triton launches (dispatch recorder), per call
  NameCounts aten_elements;        // op -> the most elements of one tensor it took
  NameCounts profiled_ops;         // the same ops as the profiler saw them
  NameCounts gpu_kernels;          // GPU kernels that are neither Triton kernels nor fills/copies
  NameCounts host_transfers;       // input-derived tensor data read on the host
  long unseen_copies_to_host = 0;  // device-to-host copies (CUPTI) beyond the conversions the recorder saw
  long formatted_tensors = 0;      // tensors turned into text (prints): their ops depend on the values

  // From the judge's traced reference call (worker trace format). nullopt when the reference launched
  // no Triton kernel: a PyTorch reference's compute is the op itself, and grants nothing.
  static std::optional<ReferenceParity> from_trace(const nlohmann::json& trace);
};

// What one traced candidate call ran beyond the reference's allowance, and what the allowance covered.
struct ParitySplit {
  NameCounts beyond;   // counts over the reference's (the whole count where an op took larger tensors)
  NameCounts covered;  // counts the reference's own PyTorch work accounts for
};

// `counts` of one call against `allowed` (empty: nothing allowed); `elements` and `allowed_elements`
// (may be null) bound the tensors an allowed op may take.
ParitySplit split_by_reference(const NameCounts& counts, const NameCounts& allowed,
                               const NameCounts* elements = nullptr,
                               const NameCounts* allowed_elements = nullptr);

// The ATen ops one traced call ran formatting tensors as text (prints), against the reference's prints:
// how many ops a print runs depends on the tensor's values, so the allowance is the number of tensors
// formatted per call: all covered when the call formatted no more than the reference, else all beyond.
ParitySplit split_formatting(const nlohmann::json& trace, long allowed_formatted_tensors);

}  // namespace kforge::verify
