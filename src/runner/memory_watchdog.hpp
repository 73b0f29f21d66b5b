#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace kforge::runner {

// Kills a worker whose process group holds more resident memory than allowed. CUDA reserves far more
// virtual memory than it touches, so on a GPU RLIMIT_AS cannot bound memory and resident pages can.
// The supervisor calls check() while it waits for a reply.
class MemoryWatchdog {
 public:
  static constexpr std::chrono::milliseconds kInterval{100};
  static constexpr unsigned kGroupScanEvery = 5;  // ticks between scans of /proc for the whole group

  explicit MemoryWatchdog(std::uint64_t limit_bytes);

  // Reads the leader's resident memory, and every kGroupScanEvery-th call the whole group's; returns
  // the verdict's message once the limit is exceeded.
  std::optional<std::string> check(pid_t group_leader);

  std::uint64_t limit_bytes() const { return limit_; }
  std::string describe() const;

  static std::uint64_t process_resident_bytes(pid_t pid);
  static std::uint64_t group_resident_bytes(pid_t group);

 private:
  std::uint64_t limit_;
  unsigned ticks_ = 0;
};

}  // namespace kforge::runner
