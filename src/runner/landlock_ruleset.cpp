#include "runner/landlock_ruleset.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "runner/landlock_abi.hpp"

namespace kforge::runner {
namespace {

// The uapi header of an older distribution may stop at ABI 1 or 2: the bits are spelled out here.
constexpr std::uint64_t kFsExecute = 1ULL << 0;
constexpr std::uint64_t kFsWriteFile = 1ULL << 1;
constexpr std::uint64_t kFsReadFile = 1ULL << 2;
constexpr std::uint64_t kFsReadDir = 1ULL << 3;
constexpr std::uint64_t kFsMakeChar = 1ULL << 6;
constexpr std::uint64_t kFsMakeBlock = 1ULL << 11;
constexpr std::uint64_t kFsAbi1 = (1ULL << 13) - 1;  // execute .. make_sym
constexpr std::uint64_t kFsRefer = 1ULL << 13;       // ABI 2
constexpr std::uint64_t kFsTruncate = 1ULL << 14;    // ABI 3
constexpr std::uint64_t kFsFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate;
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;               // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;            // ABI 4
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;              // ABI 6

// struct landlock_ruleset_attr as of ABI 6; the size passed tells the kernel which fields exist.
struct RulesetAttr {
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;
  std::uint64_t scoped = 0;
};

// LANDLOCK_ACCESS_FS_IOCTL_DEV (ABI 5) stays unhandled: the GPU driver is driven by ioctls on /dev/nvidia*.
std::uint64_t handled_fs_rights(int abi) {
  std::uint64_t rights = kFsAbi1;
  if (abi >= 2) {
    rights |= kFsRefer;
  }
  if (abi >= 3) {
    rights |= kFsTruncate;
  }
  return rights;
}

std::size_t attr_size(int abi) {
  if (abi >= kLandlockScopeAbi) {
    return sizeof(RulesetAttr);
  }
  return abi >= kLandlockTcpAbi ? 2 * sizeof(std::uint64_t) : sizeof(std::uint64_t);
}

class RuleAdder {
 public:
  RuleAdder(int ruleset, std::uint64_t handled) : ruleset_(ruleset), handled_(handled) {}

  void add(const std::filesystem::path& path, std::uint64_t rights) {
    const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) {
        return;  // e.g. /lib32 on a system without it
      }
      throw std::runtime_error(
          fmt::format("Landlock: cannot open {} for a rule: {}", path.string(), std::strerror(errno)));
    }
    struct stat info {};
    if (fstat(fd, &info) != 0) {
      const int error = errno;
      close(fd);
      throw std::runtime_error(
          fmt::format("Landlock: cannot stat {}: {}", path.string(), std::strerror(error)));
    }
    rights &= handled_;
    if (!S_ISDIR(info.st_mode)) {
      rights &= kFsFileRights;  // the kernel refuses folder rights on a file
    }
    if (rights != 0) {
      landlock_path_beneath_attr rule{};
      rule.allowed_access = rights;
      rule.parent_fd = fd;
      if (syscall(SYS_landlock_add_rule, ruleset_, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
        const int error = errno;
        close(fd);
        throw std::runtime_error(
            fmt::format("Landlock: cannot add a rule for {}: {}", path.string(), std::strerror(error)));
      }
      ++count_;
    }
    close(fd);
  }

  std::size_t count() const { return count_; }

 private:
  int ruleset_;
  std::uint64_t handled_;
  std::size_t count_ = 0;
};

}  // namespace

int LandlockRuleset::abi_version() noexcept {
  const long version = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return version < 0 ? -errno : static_cast<int>(version);
}

LandlockRuleset LandlockRuleset::create(int abi, const FilesystemAccess& access, bool scopes) {
  RulesetAttr attr;
  attr.handled_access_fs = handled_fs_rights(abi);
  const bool restricts_tcp = abi >= kLandlockTcpAbi;
  if (restricts_tcp) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;  // no rule allows any port
  }
  const bool scoped = scopes && abi >= kLandlockScopeAbi;
  if (scoped) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  }
  const long fd = syscall(SYS_landlock_create_ruleset, &attr, attr_size(abi), 0);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("Landlock: cannot create a ruleset (ABI {}): {}", abi, std::strerror(errno)));
  }
  // The child moves its pipes onto fds 0-4 before restricting itself: keep the ruleset above them.
  const int high_fd = fcntl(static_cast<int>(fd), F_DUPFD_CLOEXEC, 10);
  const int dup_error = errno;
  close(static_cast<int>(fd));
  if (high_fd < 0) {
    throw std::runtime_error(
        fmt::format("Landlock: cannot move the ruleset fd: {}", std::strerror(dup_error)));
  }
  LandlockRuleset ruleset(high_fd, abi, restricts_tcp, scoped, 0);
  ruleset.handled_fs_ = attr.handled_access_fs;
  RuleAdder adder(ruleset.fd_, attr.handled_access_fs);
  for (const auto& path : access.read_only) {
    adder.add(path, kFsExecute | kFsReadFile | kFsReadDir);
  }
  for (const auto& path : access.read_write) {
    adder.add(path, attr.handled_access_fs & ~(kFsMakeChar | kFsMakeBlock));
  }
  for (const auto& path : access.list_only) {
    adder.add(path, kFsReadDir);
  }
  ruleset.rules_ = adder.count();
  return ruleset;
}

LandlockRuleset::LandlockRuleset(int fd, int abi, bool restricts_tcp, bool scoped, std::size_t rules)
    : fd_(fd), abi_(abi), restricts_tcp_(restricts_tcp), scoped_(scoped), rules_(rules) {}

LandlockRuleset::LandlockRuleset(LandlockRuleset&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      abi_(other.abi_),
      restricts_tcp_(other.restricts_tcp_),
      scoped_(other.scoped_),
      rules_(other.rules_),
      handled_fs_(other.handled_fs_) {}

LandlockRuleset& LandlockRuleset::operator=(LandlockRuleset&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      close(fd_);
    }
    fd_ = std::exchange(other.fd_, -1);
    abi_ = other.abi_;
    restricts_tcp_ = other.restricts_tcp_;
    scoped_ = other.scoped_;
    rules_ = other.rules_;
    handled_fs_ = other.handled_fs_;
  }
  return *this;
}

LandlockRuleset::~LandlockRuleset() {
  if (fd_ >= 0) {
    close(fd_);
  }
}

std::uint64_t LandlockRuleset::own_proc_rights() const {
  return (kFsReadFile | kFsWriteFile | kFsReadDir | kFsTruncate) & handled_fs_;
}

int LandlockRuleset::allow_own_proc_directory() const noexcept {
  // In the child, /proc/self is the worker's own /proc/<pid>: the CUDA driver writes there (error 304 from
  // cuInit without it), and a process writing its own /proc files gains nothing it does not have already.
  const int fd = open("/proc/self", O_PATH | O_CLOEXEC | O_DIRECTORY);
  if (fd < 0) {
    return errno;
  }
  landlock_path_beneath_attr rule{};
  rule.allowed_access = own_proc_rights();
  rule.parent_fd = fd;
  const int result =
      syscall(SYS_landlock_add_rule, fd_, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0 ? 0 : errno;
  close(fd);
  return result;
}

int LandlockRuleset::restrict_self() const noexcept {
  return syscall(SYS_landlock_restrict_self, fd_, 0) == 0 ? 0 : errno;
}

std::string LandlockRuleset::describe() const {
  return fmt::format("on (ABI {}: files{}, {} path rules)", abi_,
                     restricts_tcp_ ? " and TCP bind/connect" : "", rules_);
}

}  // namespace kforge::runner
