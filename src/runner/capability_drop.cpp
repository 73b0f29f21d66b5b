#include "runner/capability_drop.hpp"

#include <fmt/format.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace kforge::runner {
namespace {

using CapabilitySets = std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3>;

// Root regains no capability at exec, and the child can never undo that.
constexpr unsigned long kSecureBits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                      SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;

}  // namespace

CapabilityDrop::CapabilityDrop() {
  std::ifstream file("/proc/sys/kernel/cap_last_cap");
  int last = 0;
  if (file >> last && last > 0) {
    last_capability_ = last;
  }
}

CapabilityDrop::Outcome CapabilityDrop::apply() const noexcept {
  Outcome outcome;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  CapabilitySets sets{};
  if (syscall(SYS_capget, &header, sets.data()) != 0) {
    outcome.error = errno;
    return outcome;
  }
  for (const auto& set : sets) {
    outcome.held_any = outcome.held_any || set.effective != 0 || set.permitted != 0 || set.inheritable != 0;
  }
  if (!outcome.held_any) {
    return outcome;  // an unprivileged process outside a user namespace: nothing to drop
  }
  for (int capability = 0; capability <= last_capability_; ++capability) {
    if (prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0 && errno != EINVAL) {
      outcome.error = errno;
      return outcome;
    }
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    outcome.error = errno;
    return outcome;
  }
  if (prctl(PR_SET_SECUREBITS, kSecureBits, 0, 0, 0) != 0) {
    outcome.error = errno;
    return outcome;
  }
  sets = CapabilitySets{};
  if (syscall(SYS_capset, &header, sets.data()) != 0) {
    outcome.error = errno;
  }
  return outcome;
}

std::string CapabilityDrop::describe(const Outcome& outcome) {
  if (outcome.error != 0) {
    const char* name = strerrorname_np(outcome.error);
    return fmt::format("failed: {}", name != nullptr ? name : std::to_string(outcome.error));
  }
  return outcome.held_any ? "on (every capability dropped, bounding set emptied, root locked out)"
                          : "on (none held)";
}

}  // namespace kforge::runner
