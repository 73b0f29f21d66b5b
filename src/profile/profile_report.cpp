#include "profile/profile_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

namespace kforge::profile {
namespace {

// One launch's work, averaged over all launches of a kernel (a forward may launch it several times).
KernelWork average_work(const std::vector<KernelWork>& launches) {
  KernelWork average = launches.front();
  const auto count = static_cast<double>(launches.size());
  average.seconds = average.dram_bytes = average.flops = 0;
  double occupancy = 0;
  double waves = 0;
  for (const auto& launch : launches) {
    average.seconds += launch.seconds / count;
    average.dram_bytes += launch.dram_bytes / count;
    average.flops += launch.flops / count;
    occupancy += launch.achieved_occupancy_pct / count;
    waves += launch.waves_per_sm / count;
  }
  average.achieved_occupancy_pct = launches.front().achieved_occupancy_pct < 0 ? -1 : occupancy;
  average.waves_per_sm = launches.front().waves_per_sm < 0 ? -1 : waves;
  return average;
}

// The kernels Nsight Compute saw, launches grouped by name in first-launch order.
std::vector<KernelProfile> kernels_from_ncu(const std::vector<NcuKernel>& launches,
                                            std::vector<std::string>& notes) {
  std::vector<KernelProfile> kernels;
  std::map<std::string, std::vector<KernelWork>, std::less<>> works;
  for (const auto& launch : launches) {
    auto found = std::find_if(kernels.begin(), kernels.end(),
                              [&](const KernelProfile& kernel) { return kernel.name == launch.name; });
    if (found == kernels.end()) {
      kernels.emplace_back().name = launch.name;
      found = std::prev(kernels.end());
    }
    ++found->launches;
    try {
      works[launch.name].push_back(work_from_ncu(launch));
    } catch (const std::runtime_error& error) {
      notes.emplace_back(error.what());
    }
  }
  for (auto& kernel : kernels) {
    const auto& measured = works[kernel.name];
    if (!measured.empty()) {
      kernel.work = average_work(measured);
      kernel.total_seconds = kernel.work->seconds * kernel.launches;
    }
  }
  return kernels;
}

void add_spill_findings(const TritonKernelFacts& facts, std::vector<std::string>& diagnosis) {
  if (facts.spilled_registers.value_or(0) > 0) {
    diagnosis.emplace_back(fmt::format(
        "{} registers spill to local memory (each spill is a memory round trip): smaller BLOCK sizes, "
        "fewer num_stages, or more num_warps so that each thread holds less",
        *facts.spilled_registers));
  }
}

void add_sass_findings(const TritonKernelFacts& facts, const std::optional<RooflinePosition>& position,
                       const std::string& compute_capability, std::vector<std::string>& diagnosis) {
  if (!facts.sass) {
    return;
  }
  const auto& sass = *facts.sass;
  const bool memory_matters =
      !position || position->bound == KernelBound::memory || position->bound == KernelBound::latency;
  if (memory_matters && sass.global_loads > 0 && sass.wide_global_loads == 0 && sass.async_copies == 0 &&
      sass.tma_copies == 0) {
    diagnosis.emplace_back(fmt::format(
        "none of its {} global loads is 128 bits wide (SASS has no LDG.E.128): Triton vectorises loads of "
        "contiguous offsets (tl.arange) whose pointers and sizes it knows to be 16-byte aligned; "
        "tl.multiple_of / tl.max_contiguous hints or padded sizes give it that",
        sass.global_loads));
  }
  const bool hopper = compute_capability.rfind("9.", 0) == 0;
  if (hopper && sass.tensor_core.contains("HMMA") && !sass.tensor_core.contains("HGMMA")) {
    diagnosis.emplace_back(
        "its tensor-core work uses HMMA (warp-level mma), not Hopper's HGMMA (warpgroup wgmma), which has "
        "about twice the rate: Triton emits wgmma for tl.dot when num_warps is a multiple of 4 and the "
        "tile is at least 64 rows");
  }
}

const TritonKernelFacts* facts_for(const std::optional<ProfilerOutput>& triton, const std::string& name) {
  if (!triton) {
    return nullptr;
  }
  const auto found = std::find_if(triton->kernels.begin(), triton->kernels.end(),
                                  [&](const TritonKernelFacts& facts) { return facts.name == name; });
  return found == triton->kernels.end() ? nullptr : &*found;
}

void diagnose(KernelProfile& kernel, const ProfileEvidence& evidence) {
  if (kernel.work && evidence.ceilings) {
    kernel.position = place_on_roofline(*kernel.work, *evidence.ceilings);
    kernel.diagnosis = kernel.position->diagnosis;
  }
  if (kernel.triton) {
    add_spill_findings(*kernel.triton, kernel.diagnosis);
    add_sass_findings(*kernel.triton, kernel.position,
                      evidence.triton ? evidence.triton->compute_capability : std::string(),
                      kernel.diagnosis);
  } else if (evidence.triton) {
    kernel.diagnosis.emplace_back(
        "not one of the candidate's Triton kernels (a PyTorch or library kernel its forward launches): "
        "its time counts, and fusing it into a Triton kernel removes a launch and a round trip to memory");
  }
}

// The summed roofline floors and measured times of the kernels placed on the roofline.
std::pair<double, double> floors_and_seconds(const std::vector<KernelProfile>& kernels) {
  double floors = 0;
  double seconds = 0;
  for (const auto& kernel : kernels) {
    if (kernel.position && kernel.work) {
      floors += std::max(kernel.position->memory_floor_s, kernel.position->compute_floor_s) * kernel.launches;
      seconds += kernel.total_seconds;
    }
  }
  return {floors, seconds};
}

nlohmann::json work_json(const KernelWork& work) {
  static constexpr std::array kPathNames{"cuda_core_fp32", "tensor_tf32", "tensor_fp16", "tensor_bf16"};
  return {
      {"seconds", work.seconds},
      {"dram_bytes", work.dram_bytes},
      {"flops", work.flops},
      {"math_path", kPathNames.at(static_cast<std::size_t>(work.path))},
      {"achieved_occupancy_pct", work.achieved_occupancy_pct < 0
                                     ? nlohmann::json(nullptr)
                                     : nlohmann::json(work.achieved_occupancy_pct)},
      {"waves_per_sm", work.waves_per_sm < 0 ? nlohmann::json(nullptr) : nlohmann::json(work.waves_per_sm)}};
}

// The position without its diagnosis: the kernel's own diagnosis holds it, with the other findings.
nlohmann::json roofline_json(const std::optional<RooflinePosition>& position) {
  if (!position) {
    return nullptr;
  }
  auto document = to_json(*position);
  document.erase("diagnosis");
  return document;
}

}  // namespace

ProfileReport build_profile_report(const ProfileEvidence& evidence) {
  ProfileReport report;
  if (evidence.ncu) {
    report.kernels = kernels_from_ncu(*evidence.ncu, report.notes);
    if (report.kernels.empty()) {
      report.notes.emplace_back(
          "Nsight Compute profiled no kernel in the candidate's forward: it launched nothing on the GPU");
    }
  } else {
    report.notes.emplace_back(
        fmt::format("no Nsight Compute profile ({}): times, bytes, FLOPs and the roofline "
                    "position are missing; the compiled-kernel facts below are not",
                    evidence.ncu_unavailable));
    if (evidence.triton) {
      for (const auto& facts : evidence.triton->kernels) {
        auto& kernel = report.kernels.emplace_back();
        kernel.name = facts.name;
        kernel.launches = facts.launches;
      }
    }
  }
  if (!evidence.triton) {
    report.notes.emplace_back(fmt::format("no compiled-kernel facts: {}", evidence.triton_unavailable));
  }
  if (evidence.ncu && !evidence.ceilings) {
    report.notes.emplace_back(fmt::format("no roofline: {}", evidence.ceilings_unavailable));
  }
  for (auto& kernel : report.kernels) {
    if (const auto* facts = facts_for(evidence.triton, kernel.name)) {
      kernel.triton = *facts;
    }
    diagnose(kernel, evidence);
  }
  std::stable_sort(
      report.kernels.begin(), report.kernels.end(),
      [](const KernelProfile& a, const KernelProfile& b) { return a.total_seconds > b.total_seconds; });
  const auto [floors, seconds] = floors_and_seconds(report.kernels);
  if (seconds > 0) {
    report.fraction_of_roofline = floors / seconds;
    report.floor_seconds = floors;
  }
  return report;
}

nlohmann::json to_json(const ProfileReport& report) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& kernel : report.kernels) {
    kernels.push_back({{"name", kernel.name},
                       {"launches", kernel.launches},
                       {"total_seconds", kernel.total_seconds},
                       {"per_launch", kernel.work ? work_json(*kernel.work) : nlohmann::json(nullptr)},
                       {"roofline", roofline_json(kernel.position)},
                       {"triton", kernel.triton ? to_json(*kernel.triton) : nlohmann::json(nullptr)},
                       {"diagnosis", kernel.diagnosis}});
  }
  return {{"kernels", kernels},
          {"fraction_of_roofline", report.fraction_of_roofline ? nlohmann::json(*report.fraction_of_roofline)
                                                               : nlohmann::json(nullptr)},
          {"floor_seconds",
           report.floor_seconds ? nlohmann::json(*report.floor_seconds) : nlohmann::json(nullptr)},
          {"notes", report.notes}};
}

}  // namespace kforge::profile
