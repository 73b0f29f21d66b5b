#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

namespace kforge::verify {

// What one instance of the problem holds on the device, as the judge measured it at load.
struct ProblemFootprint {
  std::uint64_t input_bytes = 0;
  std::uint64_t output_bytes = 0;
  std::uint64_t parameter_bytes = 0;          // the model's parameters and buffers
  std::uint64_t reference_working_bytes = 0;  // the reference forward's peak allocation above its inputs

  std::uint64_t total() const { return input_bytes + output_bytes + parameter_bytes; }
  // From the judge's load reply (missing fields count as 0).
  static ProblemFootprint from_load_reply(const nlohmann::json& load);
};

// The GPU memory one candidate may hold (its torch allocator's reserved memory): eight times the
// problem's footprint (room for workspaces such as an im2col buffer, nine times a 3x3 convolution's
// input), twice what the reference forward itself allocated at its peak (a candidate may use the same
// library call: cuDNN's workspace counts; twice for the caching allocator's rounding), plus 2 GiB, at most
// the device's memory; one footprint and working set more when the reference is timed in the candidate's
// process (reference_beside). KFORGE_CANDIDATE_GPU_MEMORY_GIB overrides it.
std::uint64_t candidate_gpu_memory_limit(const ProblemFootprint& footprint, std::uint64_t device_total_bytes,
                                         bool reference_beside = false);

// What a batch reserves for one evaluation on a GPU (runner::GpuMemoryBudget): the candidate's share,
// its CUDA context and the judge's working set (six copies of the inputs and outputs, and the reference
// forward's working memory twice: the judge runs the reference again for its own checks).
std::uint64_t evaluation_gpu_memory(const ProblemFootprint& footprint, std::uint64_t device_total_bytes,
                                    bool reference_beside = false);

}  // namespace kforge::verify
