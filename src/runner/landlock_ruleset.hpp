#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kforge::runner {

// What a sandboxed process may touch, as paths beneath which an access is allowed.
struct FilesystemAccess {
  std::vector<std::filesystem::path> read_only;   // read files, list folders, execute programs
  std::vector<std::filesystem::path> read_write;  // everything but making device nodes
  std::vector<std::filesystem::path> list_only;   // list folders only, e.g. /dev without its disks
};

// Landlock (Linux 5.13+): unprivileged, stackable access control. The ruleset is built in the
// supervisor through raw system calls (libc has no wrappers); the forked child only restricts itself.
// Beyond files it denies TCP bind/connect (ABI 4+), and with scopes (ABI 6+) signals to and abstract
// UNIX sockets of processes outside the sandbox. It also denies ptrace of any process outside.
class LandlockRuleset {
 public:
  // The kernel's Landlock ABI version (1, 2, ...), or -errno: ENOSYS (not built in), EOPNOTSUPP (not
  // enabled at boot, see the lsm= kernel parameter).
  static int abi_version() noexcept;

  // Throws std::runtime_error when the kernel rejects the ruleset. Paths that do not exist are skipped.
  static LandlockRuleset create(int abi, const FilesystemAccess& access, bool scopes);

  LandlockRuleset(const LandlockRuleset&) = delete;
  LandlockRuleset& operator=(const LandlockRuleset&) = delete;
  LandlockRuleset(LandlockRuleset&& other) noexcept;
  LandlockRuleset& operator=(LandlockRuleset&& other) noexcept;
  ~LandlockRuleset();

  // Async-signal-safe; needs no_new_privs (or CAP_SYS_ADMIN). Returns 0 or errno.
  int restrict_self() const noexcept;
  // Between fork and exec, before restrict_self(): lets the process read and write its own /proc/<pid>
  // (not other processes'). Returns 0 or an errno; async-signal-safe.
  int allow_own_proc_directory() const noexcept;

  int abi() const { return abi_; }
  // The ruleset's file descriptor, passed to a candidate forked by the zygote, which restricts itself.
  int fd() const { return fd_; }
  // The rights allow_own_proc_directory() grants, for a process that adds that rule itself.
  std::uint64_t own_proc_rights() const;
  bool restricts_tcp() const { return restricts_tcp_; }
  bool scoped() const { return scoped_; }
  std::string describe() const;

 private:
  LandlockRuleset(int fd, int abi, bool restricts_tcp, bool scoped, std::size_t rules);
  int fd_ = -1;
  int abi_ = 0;
  bool restricts_tcp_ = false;
  bool scoped_ = false;
  std::size_t rules_ = 0;
  std::uint64_t handled_fs_ = 0;
};

}  // namespace kforge::runner
