#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "profile/ncu_report.hpp"
#include "profile/roofline.hpp"
#include "profile/triton_kernel_facts.hpp"

namespace kforge::profile {

// What one profiling run gathered; each source may be missing, with the reason.
struct ProfileEvidence {
  std::optional<std::vector<NcuKernel>> ncu;  // every profiled launch; nullopt: ncu did not run
  std::string ncu_unavailable;
  std::optional<ProfilerOutput> triton;  // the compiled kernels; nullopt: no GPU run
  std::string triton_unavailable;
  std::optional<RooflineCeilings> ceilings;
  std::string ceilings_unavailable;
};

// One kernel of the candidate's forward: its launches averaged, its place on the roofline, what its
// compiled form says, and what to do about it.
struct KernelProfile {
  std::string name;
  int launches = 0;
  double total_seconds = 0;        // all its profiled launches; 0 without ncu
  std::optional<KernelWork> work;  // one launch, averaged over its launches
  std::optional<RooflinePosition> position;
  std::optional<TritonKernelFacts> triton;  // nullopt: not one of the candidate's Triton kernels
  std::vector<std::string> diagnosis;
};

struct ProfileReport {
  std::vector<KernelProfile> kernels;  // the longest-running first
  // Time-weighted: the sum of the kernels' roofline floors over the sum of their times.
  std::optional<double> fraction_of_roofline;
  // The forward's roofline floor: each kernel's larger floor times its launches, summed (the least
  // time its measured bytes and FLOPs need on this GPU).
  std::optional<double> floor_seconds;
  std::vector<std::string> notes;  // what could not be measured, and why
};

// Joins Nsight Compute's launches with Triton's compiled kernels by symbol name, places each kernel on
// the roofline, and writes its diagnosis. Without ncu the kernels come from Triton alone.
ProfileReport build_profile_report(const ProfileEvidence& evidence);

nlohmann::json to_json(const ProfileReport& report);

}  // namespace kforge::profile
