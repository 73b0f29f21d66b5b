#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge::profile {

// What the SASS of one compiled kernel shows (python/kforge/worker/profiler.py counts it).
struct SassSummary {
  int instructions = 0;
  int global_loads = 0;
  int wide_global_loads = 0;  // 128 bits or more per thread and instruction
  int global_stores = 0;
  int wide_global_stores = 0;
  int async_copies = 0;                    // LDGSTS (cp.async)
  int tma_copies = 0;                      // UTMALDG, UTMASTG, UBLKCP (the tensor memory accelerator)
  std::map<std::string, int> tensor_core;  // family (HGMMA, HMMA, ...) -> instruction count

  [[nodiscard]] int tensor_core_total() const;
};

// One compiled Triton kernel as its CompiledKernel object describes it.
struct TritonKernelFacts {
  std::string name;         // the kernel's symbol: what Nsight Compute prints
  std::string source_name;  // the @triton.jit function
  int launches = 0;         // in the profiled forward calls
  std::optional<int> registers;
  std::optional<int> spilled_registers;  // 32-bit registers spilled to local memory
  std::optional<int> shared_bytes;
  std::optional<int> num_warps;
  std::optional<int> num_stages;
  std::optional<SassSummary> sass;
  std::string sass_unavailable;  // why there is no SASS summary
};

// What the profiler target reported: the GPU and each compiled kernel.
struct ProfilerOutput {
  std::string device;
  std::string compute_capability;  // "9.0"
  std::vector<TritonKernelFacts> kernels;
};

// Reads profiler.py's JSON. Throws std::runtime_error with the target's own message when it reported
// an error, and naming the field when the document is malformed.
ProfilerOutput profiler_output_from_json(const nlohmann::json& document);

nlohmann::json to_json(const TritonKernelFacts& facts);

}  // namespace kforge::profile
