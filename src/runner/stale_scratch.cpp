#include "runner/stale_scratch.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <optional>
#include <string>

#include "runner/environment_variable.hpp"

namespace kforge::runner {
namespace {

namespace fs = std::filesystem;

// The pid in "kforge-<pid>-<suffix>", or nullopt for any other name (kforge-locks, kforge-kernel-...).
std::optional<pid_t> owner_pid(const std::string& name) {
  constexpr std::string_view prefix = "kforge-";
  if (name.rfind(prefix, 0) != 0) {
    return std::nullopt;
  }
  const auto end = name.find('-', prefix.size());
  if (end == std::string::npos || end == prefix.size() || end - prefix.size() > 9) {
    return std::nullopt;
  }
  const auto digits = name.substr(prefix.size(), end - prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return static_cast<pid_t>(std::stol(digits));
}

// True while a process runs under this pid. Whatever it is: a kforge binary may have another name, and
// a pid taken again by another program only delays the sweep until that one ends.
bool process_alive(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

bool untouched_for(const fs::path& folder, std::chrono::seconds min_age) {
  struct stat info {};
  if (lstat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != getuid()) {
    return false;
  }
  return std::time(nullptr) - info.st_mtime >= min_age.count();
}

}  // namespace

std::vector<fs::path> scratch_parents() {
  const auto tmp = environment_variable("TMPDIR");
  std::vector<fs::path> parents{!tmp.empty() ? fs::path(tmp) : fs::path("/tmp")};
  std::error_code error;
  if (fs::is_directory("/dev/shm", error)) {
    parents.emplace_back("/dev/shm");
  }
  return parents;
}

std::string scratch_folder_pattern() { return fmt::format("kforge-{}-XXXXXX", getpid()); }

std::size_t sweep_stale_scratch(const std::vector<fs::path>& parents, std::chrono::seconds min_age) {
  std::size_t removed = 0;
  for (const auto& parent : parents) {
    std::error_code error;
    for (fs::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
      const auto pid = owner_pid(it->path().filename().string());
      if (!pid || *pid == getpid() || process_alive(*pid) || !untouched_for(it->path(), min_age)) {
        continue;
      }
      std::error_code remove_error;
      removed += fs::remove_all(it->path(), remove_error) > 0 ? 1U : 0U;
    }
  }
  return removed;
}

}  // namespace kforge::runner
