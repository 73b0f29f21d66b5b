#include "runner/seccomp_filter.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <utility>

namespace kforge::runner {
namespace {

constexpr std::uint64_t kLow32Bits = 0xffffffffULL;
constexpr std::uint64_t kPersonalityQuery = 0xffffffffULL;  // personality(0xffffffff) only reads it

// System calls no candidate needs, each a way out of the sandbox or into another process.
constexpr std::array kDeniedCalls{"ptrace",
                                  "process_vm_readv",
                                  "process_vm_writev",
                                  "kcmp",
                                  "pidfd_getfd",
                                  "mount",
                                  "umount2",
                                  "pivot_root",
                                  "chroot",
                                  "fsopen",
                                  "fsconfig",
                                  "fsmount",
                                  "fspick",
                                  "move_mount",
                                  "open_tree",
                                  "mount_setattr",
                                  "setns",
                                  "unshare",
                                  "kexec_load",
                                  "kexec_file_load",
                                  "init_module",
                                  "finit_module",
                                  "delete_module",
                                  "bpf",
                                  "keyctl",
                                  "add_key",
                                  "request_key",
                                  "userfaultfd",
                                  "io_uring_setup",
                                  "io_uring_enter",
                                  "io_uring_register",
                                  "open_by_handle_at",
                                  "name_to_handle_at",
                                  "reboot",
                                  "swapon",
                                  "swapoff",
                                  "acct",
                                  "quotactl",
                                  "quotactl_fd",
                                  "syslog",
                                  "lookup_dcookie",
                                  "vhangup",
                                  "iopl",
                                  "ioperm",
                                  "settimeofday",
                                  "clock_settime",
                                  "clock_adjtime",
                                  "setsid",
                                  "setpgid",
                                  "setrlimit"};

constexpr std::array kNamespaceFlags{CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                     CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET, CLONE_NEWTIME};

// pid_t arguments are 32 bits: compare only those, whatever the caller left in the upper half.
scmp_arg_cmp arg_equals_32(unsigned int arg, std::int64_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, kLow32Bits, static_cast<std::uint32_t>(value)};
}

scmp_arg_cmp arg_differs(unsigned int arg, std::uint64_t value) {
  return scmp_arg_cmp{arg, SCMP_CMP_NE, value, 0};
}

scmp_arg_cmp arg_has_bits(unsigned int arg, std::uint64_t bits) {
  return scmp_arg_cmp{arg, SCMP_CMP_MASKED_EQ, bits, bits};
}

class FilterContext {
 public:
  FilterContext() : context_(seccomp_init(SCMP_ACT_ALLOW)) {
    if (context_ == nullptr) {
      throw std::runtime_error("seccomp: libseccomp could not create a filter");
    }
    // A 32-bit system call (int 0x80) would dodge the x86-64 rules: it kills the process instead.
    check(seccomp_attr_set(context_, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS),
          "set the bad-arch action");
  }
  FilterContext(const FilterContext&) = delete;
  FilterContext& operator=(const FilterContext&) = delete;
  FilterContext(FilterContext&&) = delete;
  FilterContext& operator=(FilterContext&&) = delete;
  ~FilterContext() { seccomp_release(context_); }

  void deny(const char* name, int error, std::initializer_list<scmp_arg_cmp> conditions = {}) {
    const int number = seccomp_syscall_resolve_name(name);
    if (number == __NR_SCMP_ERROR || number < 0) {
      return;  // not a system call of this architecture
    }
    check(seccomp_rule_add_array(context_, SCMP_ACT_ERRNO(static_cast<std::uint32_t>(error)), number,
                                 static_cast<unsigned int>(conditions.size()), conditions.begin()),
          fmt::format("add a rule for {}", name));
    ++rules_;
  }

  std::vector<sock_filter> export_program() const {
    const int fd = memfd_create("kforge-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
      throw std::runtime_error(fmt::format("seccomp: memfd_create failed: {}", std::strerror(errno)));
    }
    std::vector<sock_filter> program;
    const int exported = seccomp_export_bpf(context_, fd);
    const off_t size = exported == 0 ? lseek(fd, 0, SEEK_END) : -1;
    if (size > 0 && static_cast<std::size_t>(size) % sizeof(sock_filter) == 0 &&
        lseek(fd, 0, SEEK_SET) == 0) {
      program.resize(static_cast<std::size_t>(size) / sizeof(sock_filter));
      const auto read_bytes = pread(fd, program.data(), static_cast<std::size_t>(size), 0);
      if (read_bytes != size) {
        program.clear();
      }
    }
    close(fd);
    if (program.empty()) {
      throw std::runtime_error(fmt::format("seccomp: cannot export the BPF program ({})", exported));
    }
    return program;
  }

  std::size_t rules() const { return rules_; }

 private:
  static void check(int result, const std::string& what) {
    if (result < 0) {
      throw std::runtime_error(fmt::format("seccomp: cannot {}: {}", what, std::strerror(-result)));
    }
  }

  scmp_filter_ctx context_;
  std::size_t rules_ = 0;
};

}  // namespace

SeccompFilter SeccompFilter::build(const std::vector<pid_t>& protected_pids) {
  FilterContext filter;
  filter.deny("socket", EPERM, {arg_differs(0, AF_UNIX)});  // no network; UNIX sockets stay local
  for (const char* name : kDeniedCalls) {
    filter.deny(name, EPERM);
  }
  filter.deny("personality", EPERM, {arg_differs(0, kPersonalityQuery)});
  filter.deny("prlimit64", EPERM, {arg_differs(2, 0)});  // reading limits is fine, setting them is not
  for (const int flag : kNamespaceFlags) {
    filter.deny("clone", EPERM, {arg_has_bits(0, static_cast<std::uint64_t>(flag))});
  }
  // clone3 passes its flags in memory, out of the filter's sight: ENOSYS makes libc fall back to clone.
  filter.deny("clone3", ENOSYS);
  filter.deny("kill", EPERM, {arg_equals_32(0, -1)});
  for (const pid_t pid : protected_pids) {
    filter.deny("kill", EPERM, {arg_equals_32(0, pid)});
    filter.deny("kill", EPERM, {arg_equals_32(0, -static_cast<std::int64_t>(pid))});
    for (const char* name : {"tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open"}) {
      filter.deny(name, EPERM, {arg_equals_32(0, pid)});
    }
  }
  return {filter.export_program(), filter.rules()};
}

int SeccompFilter::kernel_support() noexcept {
  std::uint32_t action = SECCOMP_RET_ERRNO;
  if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0) {
    return 0;
  }
  return errno;
}

SeccompFilter::SeccompFilter(std::vector<sock_filter> program, std::size_t rules)
    : program_(std::move(program)), rules_(rules) {}

int SeccompFilter::install() noexcept {
  sock_fprog program{static_cast<unsigned short>(program_.size()), program_.data()};
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) == 0) {
    return 0;
  }
  if (errno != ENOSYS) {
    return errno;
  }
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0 ? 0 : errno;
}

std::string SeccompFilter::describe() const {
  return fmt::format(
      "on ({} rules, {} BPF instructions: no sockets but AF_UNIX, no ptrace, mounts, "
      "namespaces, modules, BPF, io_uring, setsid or signals to kforge and the judge)",
      rules_, program_.size());
}

}  // namespace kforge::runner
