#include "profile/roofline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kforge::profile {
namespace {

constexpr double kLaunchBoundSeconds = 5e-6;  // about the cost of launching a kernel
constexpr double kBoundFraction = 0.5;        // this close to a floor, that floor is what limits
constexpr double kNearBandwidth = 0.8;        // issue 6's target for memory-bound kernels

double required(const nlohmann::json& document, const nlohmann::json::json_pointer& pointer) {
  if (!document.contains(pointer) || !document.at(pointer).is_number()) {
    throw std::runtime_error(
        fmt::format("roofline ceilings: expected a number at {} (the JSON that "
                    "python -m kforge.worker.ceilings writes)",
                    pointer.to_string()));
  }
  return document.at(pointer).get<double>();
}

double metric_or(const NcuKernel& kernel, std::string_view name, double fallback) {
  return kernel.metric(name).value_or(fallback);
}

void add_latency_findings(const KernelWork& work, RooflinePosition& position) {
  if (work.waves_per_sm >= 0 && work.waves_per_sm < 1.0) {
    position.diagnosis.emplace_back(fmt::format(
        "the grid fills {:.0f}% of one wave of the SMs: launch more programs (smaller blocks, or split "
        "the reduction axis)",
        100 * work.waves_per_sm));
  }
  if (work.achieved_occupancy_pct >= 0 && work.achieved_occupancy_pct < 30) {
    position.diagnosis.emplace_back(fmt::format(
        "achieved occupancy is {:.0f}%{}: fewer warps per program or fewer pipeline stages let more "
        "programs share an SM",
        work.achieved_occupancy_pct,
        work.registers_per_thread > 128
            ? fmt::format(" with {:.0f} registers per thread", work.registers_per_thread)
            : std::string()));
  }
  position.diagnosis.emplace_back(
      "neither DRAM nor arithmetic is near its ceiling: the time goes to latency; more independent "
      "loads in flight (larger blocks, more stages) or more programs per SM usually help");
}

}  // namespace

double RooflineCeilings::flop_per_s(MathPath path) const {
  switch (path) {
    case MathPath::tensor_tf32:
      return tf32_flop_per_s;
    case MathPath::tensor_fp16:
      return fp16_flop_per_s;
    case MathPath::tensor_bf16:
      return bf16_flop_per_s;
    case MathPath::cuda_core_fp32:
      break;
  }
  return fp32_flop_per_s;
}

RooflineCeilings ceilings_from_json(const nlohmann::json& document) {
  using pointer = nlohmann::json::json_pointer;
  RooflineCeilings ceilings;
  ceilings.device = document.value("device", std::string("unknown GPU"));
  ceilings.dram_bytes_per_s = required(document, pointer("/copy/bytes_per_s"));
  ceilings.fp32_flop_per_s = required(document, pointer("/matmul/fp32/flop_per_s"));
  ceilings.tf32_flop_per_s = required(document, pointer("/matmul/tf32/flop_per_s"));
  ceilings.fp16_flop_per_s = required(document, pointer("/matmul/fp16/flop_per_s"));
  ceilings.bf16_flop_per_s = required(document, pointer("/matmul/bf16/flop_per_s"));
  return ceilings;
}

nlohmann::json to_json(const RooflineCeilings& ceilings) {
  return {{"device", ceilings.device},
          {"dram_bytes_per_s", ceilings.dram_bytes_per_s},
          {"fp32_flop_per_s", ceilings.fp32_flop_per_s},
          {"tf32_flop_per_s", ceilings.tf32_flop_per_s},
          {"fp16_flop_per_s", ceilings.fp16_flop_per_s},
          {"bf16_flop_per_s", ceilings.bf16_flop_per_s}};
}

std::string_view ncu_metric_list() {
  // Exactly what work_from_ncu reads: each further metric can cost ncu another replay pass.
  return "gpu__time_duration.sum,"
         "dram__bytes_read.sum,"
         "dram__bytes_write.sum,"
         "sm__warps_active.avg.pct_of_peak_sustained_active,"
         "launch__registers_per_thread,"
         "launch__waves_per_multiprocessor,"
         "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,"
         "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,"
         "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,"
         "sm__ops_path_tensor_op_hgmma_src_fp16.sum,"
         "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum,"
         "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum,"
         "sm__ops_path_tensor_op_hmma_src_fp16.sum,"
         "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum";
}

KernelWork work_from_ncu(const NcuKernel& kernel) {
  const auto nanoseconds = kernel.metric("gpu__time_duration.sum");
  const auto read = kernel.metric("dram__bytes_read.sum");
  const auto written = kernel.metric("dram__bytes_write.sum");
  if (!nanoseconds || !read || !written) {
    throw std::runtime_error(fmt::format(
        "kernel {}: the profile lacks gpu__time_duration.sum or dram__bytes_read/write.sum; run ncu with "
        "--metrics {}",
        kernel.name, ncu_metric_list()));
  }
  KernelWork work;
  work.name = kernel.name;
  work.seconds = *nanoseconds * 1e-9;
  work.dram_bytes = *read + *written;
  // Thread-level instruction counts: an FMA is two operations. Tensor "math ops" count each
  // multiply and each add already (2·M·N·K for a matrix product, checked on an H100).
  const double cuda_core = 2 * metric_or(kernel, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 0) +
                           metric_or(kernel, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0) +
                           metric_or(kernel, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 0);
  const double fp16 = metric_or(kernel, "sm__ops_path_tensor_op_hgmma_src_fp16.sum", 0) +
                      metric_or(kernel, "sm__ops_path_tensor_op_hmma_src_fp16.sum", 0);
  const double bf16 = metric_or(kernel, "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", 0) +
                      metric_or(kernel, "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum", 0);
  const double tf32 = metric_or(kernel, "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum", 0);
  work.flops = cuda_core + fp16 + bf16 + tf32;
  const double tensor = std::max({fp16, bf16, tf32});
  if (tensor > cuda_core) {
    work.path = tensor == bf16   ? MathPath::tensor_bf16
                : tensor == fp16 ? MathPath::tensor_fp16
                                 : MathPath::tensor_tf32;
  }
  work.achieved_occupancy_pct = metric_or(kernel, "sm__warps_active.avg.pct_of_peak_sustained_active", -1);
  work.waves_per_sm = metric_or(kernel, "launch__waves_per_multiprocessor", -1);
  work.registers_per_thread = metric_or(kernel, "launch__registers_per_thread", -1);
  return work;
}

std::string_view bound_name(KernelBound bound) {
  switch (bound) {
    case KernelBound::memory:
      return "memory-bound";
    case KernelBound::compute:
      return "compute-bound";
    case KernelBound::launch:
      return "launch-bound";
    case KernelBound::latency:
      break;
  }
  return "latency-bound";
}

RooflinePosition place_on_roofline(const KernelWork& work, const RooflineCeilings& ceilings) {
  if (work.seconds <= 0 || ceilings.dram_bytes_per_s <= 0 || ceilings.flop_per_s(work.path) <= 0) {
    throw std::runtime_error(
        fmt::format("kernel {}: a roofline needs a positive duration and ceilings", work.name));
  }
  const double rate = ceilings.flop_per_s(work.path);
  RooflinePosition position;
  position.intensity = work.dram_bytes > 0 ? work.flops / work.dram_bytes : 0;
  position.ridge = rate / ceilings.dram_bytes_per_s;
  position.memory_floor_s = work.dram_bytes / ceilings.dram_bytes_per_s;
  position.compute_floor_s = work.flops / rate;
  position.fraction_of_roofline = std::max(position.memory_floor_s, position.compute_floor_s) / work.seconds;
  position.dram_fraction = position.memory_floor_s / work.seconds;
  position.compute_fraction = position.compute_floor_s / work.seconds;
  const bool memory_larger = position.memory_floor_s >= position.compute_floor_s;

  if (work.seconds < kLaunchBoundSeconds) {
    position.bound = KernelBound::launch;
    position.diagnosis.emplace_back(fmt::format(
        "runs {:.1f} us, about what a launch costs: fuse it with the kernels around it or give each launch "
        "more work",
        work.seconds * 1e6));
  } else if (position.fraction_of_roofline >= kBoundFraction) {
    position.bound = memory_larger ? KernelBound::memory : KernelBound::compute;
  } else {
    position.bound = KernelBound::latency;
    add_latency_findings(work, position);
  }
  if (position.bound == KernelBound::memory) {
    position.diagnosis.emplace_back(
        position.dram_fraction >= kNearBandwidth
            ? fmt::format(
                  "DRAM at {:.0f}% of the measured copy bandwidth: little is left short of moving fewer "
                  "bytes (fuse with neighbours, keep intermediates in registers, lower precision)",
                  100 * position.dram_fraction)
            : fmt::format("DRAM at {:.0f}% of the measured copy bandwidth: look for loads narrower than 128 "
                          "bits, data read twice, and too few loads in flight (larger BLOCK, more warps)",
                          100 * position.dram_fraction));
  }
  if (position.bound == KernelBound::compute) {
    position.diagnosis.emplace_back(
        work.path == MathPath::cuda_core_fp32
            ? fmt::format("arithmetic at {:.0f}% of the fp32 CUDA-core rate: matrix products belong on the "
                          "tensor cores (tl.dot on fp16/bf16, or tf32)",
                          100 * position.compute_fraction)
            : fmt::format("tensor cores at {:.0f}% of the measured matmul rate: tune the tile sizes, "
                          "num_stages and the program order (grouped launch for L2 reuse)",
                          100 * position.compute_fraction));
  }
  return position;
}

nlohmann::json to_json(const RooflinePosition& position) {
  return {{"bound", bound_name(position.bound)},
          {"intensity_flop_per_byte", position.intensity},
          {"ridge_flop_per_byte", position.ridge},
          {"memory_floor_s", position.memory_floor_s},
          {"compute_floor_s", position.compute_floor_s},
          {"fraction_of_roofline", position.fraction_of_roofline},
          {"dram_fraction", position.dram_fraction},
          {"compute_fraction", position.compute_fraction},
          {"diagnosis", position.diagnosis}};
}

}  // namespace kforge::profile
