#include "runner/namespace_isolation.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "runner/errno_name.hpp"

namespace kforge::runner {
namespace {

// open + write + close, all async-signal-safe; returns 0 or errno.
int write_file(const char* path, const char* data, std::size_t size) noexcept {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno;
  }
  const auto written = write(fd, data, size);
  const int error = written == static_cast<ssize_t>(size) ? 0 : (written < 0 ? errno : EIO);
  close(fd);
  return error;
}

}  // namespace

NamespaceIsolation::NamespaceIsolation()
    : uid_map_(fmt::format("{0} {0} 1\n", geteuid())), gid_map_(fmt::format("{0} {0} 1\n", getegid())) {}

NamespaceIsolation::Outcome NamespaceIsolation::enter() const noexcept {
  Outcome outcome;
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
    outcome.user_namespace = true;
    outcome.network_namespace = true;
    constexpr std::string_view kDeny = "deny";  // setgroups must be off before an unprivileged gid_map
    int error = write_file("/proc/self/setgroups", kDeny.data(), kDeny.size());
    if (error == 0) {
      error = write_file("/proc/self/uid_map", uid_map_.data(), uid_map_.size());
    }
    if (error == 0) {
      error = write_file("/proc/self/gid_map", gid_map_.data(), gid_map_.size());
    }
    outcome.map_error = error;
    return outcome;
  }
  outcome.user_error = errno;
  if (unshare(CLONE_NEWNET) == 0) {
    outcome.network_namespace = true;
    return outcome;
  }
  outcome.network_error = errno;
  return outcome;
}

std::string NamespaceIsolation::describe(const Outcome& outcome) {
  if (outcome.user_namespace) {
    if (outcome.map_error != 0) {
      return fmt::format("on (user + network namespace; the id map failed: {})",
                         errno_name(outcome.map_error));
    }
    return "on (user + network namespace)";
  }
  if (outcome.network_namespace) {
    return fmt::format("on (network namespace; no user namespace: {})", errno_name(outcome.user_error));
  }
  return fmt::format("unavailable: user namespace {}, network namespace {}", errno_name(outcome.user_error),
                     errno_name(outcome.network_error));
}

}  // namespace kforge::runner
