#include "runner/resource_limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "runner/byte_size.hpp"

namespace kforge::runner {
namespace {

// SIGXCPU at the soft limit gives a process a moment to die on its own; the hard limit is SIGKILL.
constexpr rlim_t kCpuGraceSeconds = 5;

rlim_t current_hard_limit(int resource) {
  rlimit current{};
  if (getrlimit(resource, &current) != 0) {
    return RLIM_INFINITY;
  }
  return current.rlim_max;
}

rlimit clamped(int resource, rlim_t soft, rlim_t hard) {
  const rlim_t ceiling = current_hard_limit(resource);
  return rlimit{std::min(soft, ceiling), std::min(hard, ceiling)};
}

}  // namespace

ResourceLimits::ResourceLimits(const ResourceBudget& budget) {
  auto add = [this](int resource, rlimit value) { settings_.at(count_++) = Setting{resource, value}; };
  add(RLIMIT_CORE, rlimit{0, 0});  // a core dump would write the process's memory to disk
  if (budget.open_files > 0) {
    add(RLIMIT_NOFILE, clamped(RLIMIT_NOFILE, budget.open_files, budget.open_files));
  }
  if (budget.file_size_bytes > 0) {
    add(RLIMIT_FSIZE, clamped(RLIMIT_FSIZE, budget.file_size_bytes, budget.file_size_bytes));
  }
  if (budget.cpu_seconds > 0) {
    add(RLIMIT_CPU, clamped(RLIMIT_CPU, budget.cpu_seconds, budget.cpu_seconds + kCpuGraceSeconds));
  }
  if (budget.address_space_bytes > 0) {
    add(RLIMIT_AS, clamped(RLIMIT_AS, budget.address_space_bytes, budget.address_space_bytes));
  }
  if (budget.processes > 0) {
    processes_ = clamped(RLIMIT_NPROC, budget.processes, budget.processes);
    limit_processes_ = true;
  }
}

int ResourceLimits::apply(bool inside_user_namespace) const noexcept {
  for (std::size_t i = 0; i < count_; ++i) {
    const auto& setting = settings_[i];
    if (setrlimit(setting.resource, &setting.value) != 0) {
      return errno;
    }
  }
  if (limit_processes_ && inside_user_namespace && setrlimit(RLIMIT_NPROC, &processes_) != 0) {
    return errno;
  }
  return 0;
}

std::string ResourceLimits::describe(bool inside_user_namespace) const {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < count_; ++i) {
    const auto& setting = settings_[i];
    const rlim_t soft = setting.value.rlim_cur;
    switch (setting.resource) {
      case RLIMIT_CORE:
        parts.emplace_back("core 0");
        break;
      case RLIMIT_NOFILE:
        parts.push_back(fmt::format("nofile {}", soft));
        break;
      case RLIMIT_FSIZE:
        parts.push_back(fmt::format("fsize {}", format_bytes(soft)));
        break;
      case RLIMIT_CPU:
        parts.push_back(fmt::format("cpu {} s", soft));
        break;
      case RLIMIT_AS:
        parts.push_back(fmt::format("as {}", format_bytes(soft)));
        break;
      default:
        break;
    }
  }
  if (limit_processes_) {
    parts.push_back(inside_user_namespace
                        ? fmt::format("nproc {}", processes_.rlim_cur)
                        : std::string("nproc not set: without a user namespace it counts every process of "
                                      "the user"));
  }
  return fmt::format("on ({})", fmt::join(parts, ", "));
}

}  // namespace kforge::runner
