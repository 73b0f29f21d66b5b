#pragma once

#include <sys/resource.h>

#include <array>
#include <cstddef>
#include <string>

#include "runner/sandbox_policy.hpp"

namespace kforge::runner {

// The rlimits of a sandboxed process: computed in the supervisor (clamped to its own hard limits, which
// an unprivileged process cannot raise) and set in the forked child before exec.
class ResourceLimits {
 public:
  explicit ResourceLimits(const ResourceBudget& budget);

  // Async-signal-safe. RLIMIT_NPROC counts every process of the user outside a user namespace, so it
  // is set only inside one. Returns 0 or the errno of the first setrlimit that failed.
  int apply(bool inside_user_namespace) const noexcept;
  std::string describe(bool inside_user_namespace) const;

 private:
  struct Setting {
    int resource = 0;
    rlimit value{};
  };
  std::array<Setting, 6> settings_{};
  std::size_t count_ = 0;
  rlimit processes_{};
  bool limit_processes_ = false;
};

}  // namespace kforge::runner
