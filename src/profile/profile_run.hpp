#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile_report.hpp"

namespace kforge::profile {

// One profiling run of a candidate that the verdict pipeline accepted.
struct ProfileRunSettings {
  std::filesystem::path problem_path;
  std::string candidate_code;  // plain Python (already extracted from an LLM response)
  std::string device = "cuda:0";
  std::uint64_t seed = 42;
  bool small = false;
  std::map<std::string, std::string> sizes;
  std::optional<std::filesystem::path> python;
  std::optional<std::filesystem::path> ncu;  // nullopt: no Nsight Compute (the reason in ncu_missing)
  std::string ncu_missing;
  std::optional<std::filesystem::path> ceilings_file;  // nullopt: the cached measurement of this GPU model
  std::string gpu_identity;                            // the timing lease's key (the GPU's UUID)
  double timeout_s = 600;
};

// Nsight Compute: the explicit path, else $KFORGE_NCU, else `ncu` on PATH, else
// /usr/local/cuda/bin/ncu. nullopt when none is an executable file.
std::optional<std::filesystem::path> find_ncu(const std::optional<std::filesystem::path>& explicit_path);

// Where the measured ceilings of a GPU model are kept: ceilings/<model>.json beside the default store.
std::filesystem::path ceilings_cache_path(const std::string& device_name);

// The ncu command line in front of the profile target: clocks left alone, only the launches between
// cudaProfilerStart and Stop, raw CSV in base units into `log_file`.
std::vector<std::string> ncu_command(const std::filesystem::path& ncu, const std::filesystem::path& log_file);

// Runs the profile target (under ncu when there is one; without it when ncu is missing or fails), then
// finds or measures the roofline ceilings. Holds the GPU's timing lease throughout. Never throws for a
// failure of the candidate or of ncu: each missing piece of evidence carries its reason.
ProfileEvidence gather_profile_evidence(const ProfileRunSettings& settings);

}  // namespace kforge::profile
