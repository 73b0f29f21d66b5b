#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "profile/profile_run.hpp"

namespace kforge::profile {
namespace {

namespace fs = std::filesystem;

TEST(ProfileRun, NcuLeavesClocksAloneAndMeasuresOnlyTheProfiledRange) {
  const auto command = ncu_command("/opt/ncu", "/tmp/log.csv");
  const auto has = [&](const std::string& flag, const std::string& value) {
    const auto found = std::find(command.begin(), command.end(), flag);
    return found != command.end() && std::next(found) != command.end() && *std::next(found) == value;
  };
  EXPECT_EQ(command.front(), "/opt/ncu");
  EXPECT_TRUE(has("--clock-control", "none"));
  EXPECT_TRUE(has("--profile-from-start", "off"));
  EXPECT_TRUE(has("--log-file", "/tmp/log.csv"));
  EXPECT_TRUE(has("--metrics", std::string(ncu_metric_list())));
  EXPECT_FALSE(find_ncu(std::filesystem::path("/nonexistent/ncu")).has_value());
  EXPECT_EQ(ceilings_cache_path("NVIDIA H100 80GB HBM3").filename(), "NVIDIA_H100_80GB_HBM3.json");
}

// A stand-in for Nsight Compute that fails the way ncu does without access to the GPU's counters.
fs::path failing_ncu(const fs::path& folder) {
  const auto path = folder / "ncu";
  std::ofstream(path)
      << "#!/bin/sh\necho '==ERROR== ERR_NVGPUCTRPERM - no permission to the counters' >&2\nexit 1\n";
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

TEST(ProfileRun, AFailingNcuAndAFailingRunBecomeReasonsNotCrashes) {
  const auto folder = fs::temp_directory_path() / ("kforge-profile-run-" + std::to_string(getpid()));
  fs::create_directories(folder);
  ProfileRunSettings settings;
  settings.problem_path =
      fs::path(KFORGE_SOURCE_DIR) / "problems" / "starter" / "02_gelu_tanh" / "problem.py";
  settings.candidate_code = "class ModelNew:\n    pass\n";
  settings.device = "cpu";  // the profile target needs CUDA: its run fails with that reason
  settings.ncu = failing_ncu(folder);
  settings.gpu_identity = "profile-run-test";
  settings.timeout_s = 120;
  ASSERT_TRUE(find_ncu(settings.ncu).has_value());
  const auto evidence = gather_profile_evidence(settings);
  fs::remove_all(folder);
  EXPECT_FALSE(evidence.ncu.has_value());
  EXPECT_NE(evidence.ncu_unavailable.find("ERR_NVGPUCTRPERM"), std::string::npos) << evidence.ncu_unavailable;
  EXPECT_FALSE(evidence.triton.has_value()) << "the run without ncu was tried too, and failed";
  EXPECT_NE(evidence.triton_unavailable.find("CUDA device"), std::string::npos)
      << evidence.triton_unavailable;
  EXPECT_FALSE(evidence.ceilings.has_value());
}

}  // namespace
}  // namespace kforge::profile
