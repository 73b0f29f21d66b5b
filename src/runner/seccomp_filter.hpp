#pragma once

#include <linux/filter.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace kforge::runner {

// A seccomp-BPF program that allows everything but what no kernel candidate needs: sockets other than
// AF_UNIX, ptrace and cross-process memory access, mounts and namespaces, kernel modules, BPF, keyrings,
// io_uring (its requests bypass seccomp), leaving the process group, raising rlimits, and signals to
// the protected processes. Denied calls fail with EPERM, so Python raises PermissionError.
// Built with libseccomp in the supervisor (it allocates); the forked child only installs the program.
class SeccompFilter {
 public:
  // protected_pids may not be signalled, nor their process groups. Throws std::runtime_error.
  static SeccompFilter build(const std::vector<pid_t>& protected_pids);

  // Whether the kernel accepts seccomp filters: 0, or the errno that says why not.
  static int kernel_support() noexcept;

  // Async-signal-safe; needs no_new_privs. Returns 0 or errno.
  int install() noexcept;

  std::size_t rule_count() const { return rules_; }
  // The BPF program, for a process that installs it itself (a candidate forked by the zygote).
  const std::vector<sock_filter>& program() const { return program_; }
  std::string describe() const;

 private:
  SeccompFilter(std::vector<sock_filter> program, std::size_t rules);
  std::vector<sock_filter> program_;
  std::size_t rules_ = 0;
};

}  // namespace kforge::runner
