#include "verify/gpu_memory_share.hpp"

#include <algorithm>

#include "runner/sandbox_policy.hpp"

namespace kforge::verify {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kFootprintCopies = 8;
constexpr std::uint64_t kBesideReferenceCopies = 1;  // the reference timed in the candidate's process
constexpr std::uint64_t kBaseBytes = 2 * kGiB;
constexpr std::uint64_t kContextBytes = kGiB;
// One side's timing placements (python/kforge/worker/placements.py): extra input copies and kept outputs
// (128 MiB each at most) and the moving L2-flush window (96 MiB), rounded up.
constexpr std::uint64_t kTimingPlacementBytes = std::uint64_t{384} << 20;
// The judge's working set during one evaluation, in copies of the inputs and outputs: the cached reference,
// the trial's shared copies, a comparison's temporaries, the reruns of the determinism and TF32 checks.
constexpr std::uint64_t kJudgeCopies = 6;
constexpr std::uint64_t kReferenceWorkingCopies = 2;

std::uint64_t field(const nlohmann::json& load, const char* name) {
  if (!load.is_object()) {
    return 0;
  }
  const auto found = load.find(name);
  return found != load.end() && found->is_number_unsigned() ? found->get<std::uint64_t>() : 0;
}

}  // namespace

ProblemFootprint ProblemFootprint::from_load_reply(const nlohmann::json& load) {
  return {field(load, "input_bytes"), field(load, "output_bytes"), field(load, "parameter_bytes"),
          field(load, "reference_working_bytes")};
}

std::uint64_t candidate_gpu_memory_limit(const ProblemFootprint& footprint, std::uint64_t device_total_bytes,
                                         bool reference_beside) {
  if (const auto configured = runner::gpu_memory_limit_from_environment()) {
    return *configured;
  }
  const std::uint64_t beside = reference_beside ? kBesideReferenceCopies : 0;
  const std::uint64_t share = kBaseBytes + (1 + beside) * kTimingPlacementBytes +
                              (kFootprintCopies + beside) * footprint.total() +
                              (kReferenceWorkingCopies + beside) * footprint.reference_working_bytes;
  return device_total_bytes > 0 ? std::min(share, device_total_bytes) : share;
}

std::uint64_t evaluation_gpu_memory(const ProblemFootprint& footprint, std::uint64_t device_total_bytes,
                                    bool reference_beside) {
  return candidate_gpu_memory_limit(footprint, device_total_bytes, reference_beside) + kContextBytes +
         kTimingPlacementBytes + kJudgeCopies * (footprint.input_bytes + footprint.output_bytes) +
         kReferenceWorkingCopies * footprint.reference_working_bytes;
}

}  // namespace kforge::verify
