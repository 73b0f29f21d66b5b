#include "runner/cleanup_registry.hpp"

#include <csignal>

namespace kforge::runner {

CleanupRegistry& CleanupRegistry::instance() {
  static CleanupRegistry registry;
  return registry;
}

void CleanupRegistry::add_process_group(pid_t group) {
  const std::lock_guard lock(mutex_);
  groups_.insert(group);
}

void CleanupRegistry::forget_process_group(pid_t group) {
  const std::lock_guard lock(mutex_);
  groups_.erase(group);
}

void CleanupRegistry::add_process(pid_t pid) {
  const std::lock_guard lock(mutex_);
  processes_.insert(pid);
}

void CleanupRegistry::forget_process(pid_t pid) {
  const std::lock_guard lock(mutex_);
  processes_.erase(pid);
}

void CleanupRegistry::add_folder(const std::filesystem::path& folder) {
  const std::lock_guard lock(mutex_);
  folders_.insert(folder);
}

void CleanupRegistry::forget_folder(const std::filesystem::path& folder) {
  const std::lock_guard lock(mutex_);
  folders_.erase(folder);
}

CleanupRegistry::Cleaned CleanupRegistry::clean_up_for_exit() {
  mutex_.lock();  // never unlocked: the process exits next, and no new worker or folder may appear
  for (const pid_t group : groups_) {
    kill(-group, SIGSTOP);
  }
  for (const pid_t pid : processes_) {
    kill(pid, SIGSTOP);
  }
  Cleaned cleaned{groups_.size() + processes_.size(), 0};
  for (const auto& folder : folders_) {
    std::error_code error;
    cleaned.folders += std::filesystem::remove_all(folder, error) > 0 ? 1U : 0U;
  }
  for (const pid_t group : groups_) {
    kill(-group, SIGKILL);
  }
  for (const pid_t pid : processes_) {
    kill(pid, SIGKILL);
  }
  return cleaned;
}

}  // namespace kforge::runner
