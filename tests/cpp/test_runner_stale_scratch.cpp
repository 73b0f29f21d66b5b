#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "runner/environment_probe.hpp"
#include "runner/scratch_space.hpp"
#include "runner/stale_scratch.hpp"

namespace kforge::runner {
namespace {

namespace fs = std::filesystem;

// A pid no process has now (kill(pid, 0) fails), searched downwards from the largest pids.
pid_t unused_pid() {
  for (pid_t pid = 4194000; pid > 1000; --pid) {
    if (!fs::exists(fs::path("/proc") / std::to_string(pid))) {
      return pid;
    }
  }
  return 999999;
}

class StaleScratch : public ::testing::Test {
 protected:
  void SetUp() override {
    parent_ = fs::temp_directory_path() / ("kforge-stale-test-" + std::to_string(getpid()));
    fs::create_directories(parent_);
  }
  void TearDown() override { fs::remove_all(parent_); }

  fs::path folder(const std::string& name, bool old) const {
    const auto path = parent_ / name;
    fs::create_directories(path / "inner");
    std::ofstream(path / "inner" / "buffer.bin") << "tensor bytes";
    if (old) {
      fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(1));
    }
    return path;
  }

  fs::path parent_;
};

TEST_F(StaleScratch, RemovesOnlyWhatADeadKforgeLeft) {
  const auto dead = std::to_string(unused_pid());
  const auto left_behind = folder("kforge-" + dead + "-abc123", true);
  const auto just_made = folder("kforge-" + dead + "-def456", false);  // may belong to another namespace
  const auto mine = folder("kforge-" + std::to_string(getpid()) + "-ghi789", true);
  const auto locks = folder("kforge-locks", true);
  const auto kernel = folder("kforge-kernel-0123456789abcdef", true);
  const auto other = folder("someone-else", true);
  EXPECT_EQ(sweep_stale_scratch({parent_}), 1U);
  EXPECT_FALSE(fs::exists(left_behind));
  for (const auto& kept : {just_made, mine, locks, kernel, other}) {
    EXPECT_TRUE(fs::exists(kept)) << kept;
  }
}

TEST(ScratchSpaceNames, CarryThePidSoALaterRunCanTellWhose) {
  const auto scratch = ScratchSpace::create();
  const auto prefix = "kforge-" + std::to_string(getpid()) + "-";
  EXPECT_EQ(scratch.directory().filename().string().rfind(prefix, 0), 0U) << scratch.directory();
  EXPECT_EQ(scratch.transfer_directory().filename().string().rfind(prefix, 0), 0U)
      << scratch.transfer_directory();
}

TEST(DeviceRequests, ATypoIsRefusedWithTheChoices) {
  for (const auto* valid : {"auto", "cpu", "cuda", "cuda:0", "cuda:12"}) {
    EXPECT_EQ(device_request_problem(valid), "") << valid;
  }
  for (const auto* invalid : {"gpu", "cuda:", "cuda:x", "CPU", "cuda:0,1", ""}) {
    const auto problem = device_request_problem(invalid);
    EXPECT_NE(problem.find("expected auto"), std::string::npos) << invalid << ": " << problem;
  }
  EXPECT_EQ(resolve_device("cuda:1"), "cuda:1");
  EXPECT_EQ(resolve_device("cpu"), "cpu");
}

}  // namespace
}  // namespace kforge::runner
