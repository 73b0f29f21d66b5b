#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <mutex>
#include <set>

namespace kforge::runner {

// What kforge must take down if it is interrupted: the process groups of its workers, the programs it
// runs, and its scratch folders (shared memory on /dev/shm included). Everything that starts a process
// or creates a scratch folder records it here and forgets it once it is gone. One per process (signals
// are a process-wide event), so it is the one piece of state that is global; it only holds ids and paths.
class CleanupRegistry {
 public:
  static CleanupRegistry& instance();

  CleanupRegistry() = default;
  CleanupRegistry(const CleanupRegistry&) = delete;
  CleanupRegistry& operator=(const CleanupRegistry&) = delete;
  CleanupRegistry(CleanupRegistry&&) = delete;
  CleanupRegistry& operator=(CleanupRegistry&&) = delete;
  ~CleanupRegistry() = default;

  void add_process_group(pid_t group);
  void forget_process_group(pid_t group);
  void add_process(pid_t pid);  // a program in kforge's own process group
  void forget_process(pid_t pid);
  void add_folder(const std::filesystem::path& folder);
  void forget_folder(const std::filesystem::path& folder);

  struct Cleaned {
    std::size_t processes = 0;
    std::size_t folders = 0;
  };
  // Stops every recorded process (SIGSTOP first, so none can answer or write while the folders go),
  // removes every recorded folder, then kills the processes. Afterwards the registry stays locked: the
  // caller is about to exit, and nothing may start meanwhile.
  Cleaned clean_up_for_exit();

 private:
  std::mutex mutex_;
  std::set<pid_t> groups_;
  std::set<pid_t> processes_;
  std::set<std::filesystem::path> folders_;
};

}  // namespace kforge::runner
