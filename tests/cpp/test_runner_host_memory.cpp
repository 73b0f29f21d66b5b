#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "runner/host_memory.hpp"

namespace kforge::runner {
namespace {

namespace fs = std::filesystem;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// A fake /proc and /sys/fs/cgroup under a temporary folder.
class FakeMachine : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kforge-host-memory-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(proc() / "self");
    fs::create_directories(cgroup());
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path proc() const { return root_ / "proc"; }
  fs::path cgroup() const { return root_ / "cgroup"; }
  static void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

 private:
  fs::path root_;
};

TEST_F(FakeMachine, MemAvailableAloneWithoutACgroupLimit) {
  write(proc() / "meminfo", "MemTotal:       25165824 kB\nMemAvailable:   20971520 kB\n");
  write(proc() / "self" / "cgroup", "0::/user.slice/session\n");
  write(cgroup() / "user.slice" / "session" / "memory.max", "max\n");
  EXPECT_EQ(available_memory_bytes(proc(), cgroup()), 20 * kGiB);
}

TEST_F(FakeMachine, ACgroupV2LimitUpTheHierarchyLowersIt) {
  write(proc() / "meminfo", "MemAvailable:   62914560 kB\n");  // 60 GiB free on the host
  write(proc() / "self" / "cgroup", "0::/ci/job\n");
  write(cgroup() / "ci" / "job" / "memory.max", "max\n");
  write(cgroup() / "ci" / "memory.max", std::to_string(24 * kGiB) + "\n");  // the container's 24 GiB
  write(cgroup() / "ci" / "memory.current", std::to_string(4 * kGiB) + "\n");
  EXPECT_EQ(available_memory_bytes(proc(), cgroup()), 20 * kGiB);
}

TEST_F(FakeMachine, ACgroupV1MemoryControllerCounts) {
  write(proc() / "meminfo", "MemAvailable:   62914560 kB\n");
  write(proc() / "self" / "cgroup", "4:cpu,cpuacct:/x\n3:memory:/docker/abc\n");
  write(cgroup() / "memory" / "docker" / "abc" / "memory.limit_in_bytes", std::to_string(16 * kGiB));
  write(cgroup() / "memory" / "docker" / "abc" / "memory.usage_in_bytes", std::to_string(6 * kGiB));
  EXPECT_EQ(available_memory_bytes(proc(), cgroup()), 10 * kGiB);
}

TEST_F(FakeMachine, NothingReadableIsUnknown) { EXPECT_FALSE(available_memory_bytes(proc(), cgroup())); }

TEST(DefaultMemoryLimit, HalfOfWhatIsAvailableWithinBounds) {
  EXPECT_EQ(default_memory_limit(20 * kGiB), 10 * kGiB) << "a 24 GiB machine: far below its RAM";
  EXPECT_EQ(default_memory_limit(500 * kGiB), 32 * kGiB);
  EXPECT_EQ(default_memory_limit(kGiB), kGiB);
  EXPECT_EQ(default_memory_limit(std::nullopt), 32 * kGiB);
}

}  // namespace
}  // namespace kforge::runner
