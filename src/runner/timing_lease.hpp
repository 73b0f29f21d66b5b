#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace kforge::runner {

// Exclusive right to time work on one GPU, shared by every kforge process on the machine: an flock on
// a per-GPU lock file. Compilation and correctness never take it; timing always does.
class TimingLease {
 public:
  // Blocks until the lease is held or wait_limit passes (then throws std::runtime_error).
  static TimingLease acquire(const std::string& gpu_identity, std::chrono::milliseconds wait_limit);

  TimingLease(const TimingLease&) = delete;
  TimingLease& operator=(const TimingLease&) = delete;
  TimingLease(TimingLease&& other) noexcept;
  TimingLease& operator=(TimingLease&& other) noexcept;
  ~TimingLease();

  std::chrono::milliseconds waited() const { return waited_; }
  const std::filesystem::path& lock_path() const { return path_; }

 private:
  TimingLease(int fd, std::filesystem::path path, std::chrono::milliseconds waited);
  int fd_ = -1;
  std::filesystem::path path_;
  std::chrono::milliseconds waited_{0};
};

// The folder holding the lock files: $KFORGE_LOCK_DIR, else $XDG_RUNTIME_DIR/kforge, else /tmp/kforge-locks.
std::filesystem::path lease_directory();

}  // namespace kforge::runner
