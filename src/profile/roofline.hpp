#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "profile/ncu_report.hpp"

namespace kforge::profile {

// Which unit does a kernel's arithmetic: the CUDA cores in fp32, or the tensor cores per input type.
enum class MathPath { cuda_core_fp32, tensor_tf32, tensor_fp16, tensor_bf16 };

// The measured ceilings of one GPU, as kforge.worker.ceilings writes them: a large device copy
// for DRAM bandwidth, a large matrix product per data type for the arithmetic rates.
struct RooflineCeilings {
  std::string device;
  double dram_bytes_per_s = 0;
  double fp32_flop_per_s = 0;
  double tf32_flop_per_s = 0;
  double fp16_flop_per_s = 0;
  double bf16_flop_per_s = 0;

  [[nodiscard]] double flop_per_s(MathPath path) const;
};

nlohmann::json to_json(const RooflineCeilings& ceilings);

// Reads that JSON; throws std::runtime_error naming the missing field.
RooflineCeilings ceilings_from_json(const nlohmann::json& document);

// What one kernel launch did, from its profile.
struct KernelWork {
  std::string name;
  double seconds = 0;
  double dram_bytes = 0;  // read + written
  double flops = 0;       // fp32 on CUDA cores plus tensor-core math ops
  MathPath path = MathPath::cuda_core_fp32;
  double achieved_occupancy_pct = -1;  // warps active over the SM's maximum; -1: not measured
  double waves_per_sm = -1;            // blocks over what all SMs hold at once; -1: not measured
  double registers_per_thread = -1;
};

// The metrics kforge asks ncu for (`--metrics` list); work_from_ncu reads them.
std::string_view ncu_metric_list();

// Throws std::runtime_error when the kernel lacks its duration or DRAM byte counts.
KernelWork work_from_ncu(const NcuKernel& kernel);

enum class KernelBound { memory, compute, latency, launch };
std::string_view bound_name(KernelBound bound);

// Where a kernel sits against the roofline, what limits it, and what to try.
struct RooflinePosition {
  double intensity = 0;             // FLOPs per DRAM byte
  double ridge = 0;                 // the intensity where the two ceilings meet, for this math path
  double memory_floor_s = 0;        // bytes over the measured bandwidth
  double compute_floor_s = 0;       // FLOPs over the measured rate
  double fraction_of_roofline = 0;  // the larger floor over the measured time
  double dram_fraction = 0;         // achieved bytes/s over the measured copy bandwidth
  double compute_fraction = 0;      // achieved FLOP/s over the measured rate of its math path
  KernelBound bound = KernelBound::latency;
  std::vector<std::string> diagnosis;
};

// A kernel that runs within a few microseconds is launch-bound; one within half of its roofline
// floor is memory- or compute-bound by the larger floor; anything else is latency-bound (too little
// work in flight), with the occupancy figures that say why.
RooflinePosition place_on_roofline(const KernelWork& work, const RooflineCeilings& ceilings);

nlohmann::json to_json(const RooflinePosition& position);

}  // namespace kforge::profile
