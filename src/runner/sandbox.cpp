#include "runner/sandbox.hpp"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include "runner/errno_name.hpp"
#include "runner/landlock_abi.hpp"
#include "runner/memory_watchdog.hpp"

namespace kforge::runner {
namespace {

namespace fs = std::filesystem;

std::string landlock_absence(int abi_or_error) {
  const int error = -abi_or_error;
  switch (error) {
    case ENOSYS:
      return "ENOSYS: the kernel has no Landlock (it needs Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK)";
    case EOPNOTSUPP:
      return "EOPNOTSUPP: Landlock is built in but not enabled (add landlock to the lsm= kernel parameter)";
    case EPERM:
      return "EPERM: a container's seccomp profile refuses the Landlock system calls";
    default:
      return errno_name(error);
  }
}

bool lies_under(const fs::path& path, const fs::path& root) {
  std::error_code error;
  const fs::path canonical_path = fs::weakly_canonical(path, error);
  const fs::path canonical_root = fs::weakly_canonical(root, error);
  if (canonical_root.empty()) {
    return false;
  }
  const auto [root_end, path_end] = std::mismatch(canonical_root.begin(), canonical_root.end(),
                                                  canonical_path.begin(), canonical_path.end());
  return root_end == canonical_root.end();
}

std::vector<pid_t> protected_processes(const SandboxPolicy& policy) {
  std::vector<pid_t> pids = policy.protected_pids;
  pids.push_back(getpid());   // kforge itself
  pids.push_back(getpgrp());  // and the group it runs in
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  std::erase_if(pids, [](pid_t pid) { return pid <= 1; });
  return pids;
}

std::string mode_hint() {
  return "Set KFORGE_SANDBOX=best-effort to run with the layers this kernel has (the verdict lists them), or "
         "KFORGE_SANDBOX=off to run the candidate unsandboxed";
}

const char* step_layer(SandboxReport::Step step) {
  switch (step) {
    case SandboxReport::Step::no_new_privs:
      return "no_new_privs";
    case SandboxReport::Step::network_namespace:
      return kLayerNamespaces;
    case SandboxReport::Step::rlimits:
      return kLayerRlimits;
    case SandboxReport::Step::capabilities:
      return kLayerCapabilities;
    case SandboxReport::Step::landlock:
      return kLayerLandlock;
    case SandboxReport::Step::seccomp:
      return kLayerSeccomp;
    case SandboxReport::Step::none:
      break;
  }
  return "none";
}

}  // namespace

KernelSupport KernelSupport::detect() {
  return KernelSupport{LandlockRuleset::abi_version(), SeccompFilter::kernel_support()};
}

bool PreparedSandbox::required(const char* layer) const {
  if (disabled_.contains(layer)) {
    return false;  // the user switched it off by name: reported, never required
  }
  const std::string name = layer;
  switch (mode_) {
    case SandboxMode::strict:
      return true;
    case SandboxMode::on:
      return name == kLayerLandlock || name == kLayerSeccomp || name == kLayerRlimits;
    case SandboxMode::best_effort:
    case SandboxMode::off:
      return false;
  }
  return false;
}

std::string PreparedSandbox::layer_off(const char* layer) const {
  if (mode_ == SandboxMode::off) {
    return "off: KFORGE_SANDBOX=off";
  }
  return disabled_.contains(layer) ? "off: KFORGE_SANDBOX_DISABLE" : "";
}

PreparedSandbox PreparedSandbox::prepare(const SandboxPolicy& policy, const KernelSupport& kernel) {
  PreparedSandbox sandbox;
  sandbox.mode_ = policy.mode;
  sandbox.disabled_ = policy.disabled_layers;
  if (policy.mode == SandboxMode::off) {
    sandbox.warnings_.emplace_back(
        "the candidate runs unsandboxed (KFORGE_SANDBOX=off): it can read the problem file, use the network "
        "and signal other processes");
    return sandbox;
  }
  sandbox.try_namespaces_ = policy.network_namespace && policy.layer_enabled(kLayerNamespaces);
  // Decided here: the child may not allocate, so it only reads these flags.
  sandbox.require_namespaces_ = sandbox.try_namespaces_ && sandbox.required(kLayerNamespaces);
  sandbox.require_rlimits_ = sandbox.required(kLayerRlimits);
  sandbox.require_capabilities_ = sandbox.required(kLayerCapabilities);
  sandbox.require_landlock_ = sandbox.required(kLayerLandlock);
  sandbox.require_seccomp_ = sandbox.required(kLayerSeccomp);
  if (policy.layer_enabled(kLayerRlimits)) {
    sandbox.limits_.emplace(policy.budget);
  }
  if (policy.layer_enabled(kLayerCapabilities)) {
    sandbox.capabilities_.emplace();
  }

  const bool want_landlock = policy.layer_enabled(kLayerLandlock);
  const bool want_scopes = policy.layer_enabled(kLayerLandlockScopes);
  if (want_landlock && kernel.landlock_abi > 0) {
    const FilesystemAccess access{policy.read_only_paths, policy.read_write_paths, {fs::path("/dev")}};
    sandbox.landlock_.emplace(LandlockRuleset::create(kernel.landlock_abi, access, want_scopes));
  } else if (want_landlock) {
    sandbox.landlock_unavailable_ = "unavailable: " + landlock_absence(kernel.landlock_abi);
  }
  if (want_scopes && (!sandbox.landlock_ || !sandbox.landlock_->scoped())) {
    sandbox.scopes_unavailable_ = sandbox.landlock_ ? fmt::format("unavailable: Landlock ABI {} < {}",
                                                                  kernel.landlock_abi, kLandlockScopeAbi)
                                                    : "unavailable: no Landlock";
  }
  if (policy.layer_enabled(kLayerSeccomp)) {
    if (kernel.seccomp_error == 0) {
      sandbox.seccomp_.emplace(SeccompFilter::build(protected_processes(policy)));
    } else {
      sandbox.seccomp_unavailable_ = "unavailable: " + errno_name(kernel.seccomp_error);
    }
  }
  if (policy.layer_enabled(kLayerMemoryWatchdog) && policy.budget.resident_bytes > 0) {
    sandbox.memory_limit_ = policy.budget.resident_bytes;
  }

  // Missing layers the mode insists on stop the start here, before anything runs.
  if (sandbox.required(kLayerLandlock) && !sandbox.landlock_) {
    throw std::runtime_error(fmt::format(
        "cannot sandbox the candidate: Landlock is {}. Without it the candidate could read the problem file "
        "and the judge's files. {}",
        sandbox.landlock_unavailable_, mode_hint()));
  }
  if (sandbox.required(kLayerSeccomp) && !sandbox.seccomp_) {
    throw std::runtime_error(fmt::format(
        "cannot sandbox the candidate: seccomp is {}. Without it the candidate could open network "
        "sockets and ptrace other processes. {}",
        sandbox.seccomp_unavailable_, mode_hint()));
  }
  if (sandbox.required(kLayerLandlockScopes) && !sandbox.scopes_unavailable_.empty()) {
    throw std::runtime_error(fmt::format("KFORGE_SANDBOX=strict: Landlock scopes are {}. {}",
                                         sandbox.scopes_unavailable_, mode_hint()));
  }
  if (sandbox.required(kLayerLandlock) && sandbox.mode_ == SandboxMode::strict &&
      kernel.landlock_abi < kLandlockTcpAbi) {
    throw std::runtime_error(
        fmt::format("KFORGE_SANDBOX=strict: Landlock ABI {} cannot restrict TCP (needs {}). {}",
                    kernel.landlock_abi, kLandlockTcpAbi, mode_hint()));
  }

  for (const auto& secret : policy.must_stay_unreadable) {
    if (!sandbox.landlock_) {
      sandbox.warnings_.push_back(fmt::format(
          "without Landlock the candidate can read {} like any file kforge can read", secret.string()));
      continue;
    }
    for (const auto& allowed : {policy.read_only_paths, policy.read_write_paths}) {
      for (const auto& root : allowed) {
        if (lies_under(secret, root)) {
          sandbox.warnings_.push_back(
              fmt::format("{} is readable by the candidate: it lies under {}, which the "
                          "candidate may read; keep problems outside it",
                          secret.string(), root.string()));
        }
      }
    }
  }
  return sandbox;
}

bool PreparedSandbox::apply_in_child(SandboxReport& report) noexcept {
  if (mode_ == SandboxMode::off) {
    return true;
  }
  auto fail = [&report](SandboxReport::Step step, int error) {
    report.failed_step = step;
    report.failed_errno = error;
    return false;
  };
  if (try_namespaces_) {
    report.namespaces = namespaces_.enter();
    report.namespaces_tried = true;
    if (require_namespaces_ && !report.namespaces.network_namespace) {
      return fail(SandboxReport::Step::network_namespace, report.namespaces.network_error);
    }
  }
  if (limits_) {
    report.rlimit_error = limits_->apply(report.namespaces.user_namespace);
    report.rlimits_applied = report.rlimit_error == 0;
    if (!report.rlimits_applied && require_rlimits_) {
      return fail(SandboxReport::Step::rlimits, report.rlimit_error);
    }
  }
  if (capabilities_) {
    report.capabilities = capabilities_->apply();
    report.capabilities_tried = true;
    if (report.capabilities.error != 0 && require_capabilities_) {
      return fail(SandboxReport::Step::capabilities, report.capabilities.error);
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {  // no setuid gains; Landlock and seccomp need it
    return fail(SandboxReport::Step::no_new_privs, errno);
  }
  if (landlock_) {
    report.landlock_error = landlock_->allow_own_proc_directory();
    if (report.landlock_error == 0) {
      report.landlock_error = landlock_->restrict_self();
    }
    report.landlock_applied = report.landlock_error == 0;
    if (!report.landlock_applied && require_landlock_) {
      return fail(SandboxReport::Step::landlock, report.landlock_error);
    }
  }
  if (seccomp_) {  // last: it forbids unshare, setrlimit and the like used above
    report.seccomp_error = seccomp_->install();
    report.seccomp_applied = report.seccomp_error == 0;
    if (!report.seccomp_applied && require_seccomp_) {
      return fail(SandboxReport::Step::seccomp, report.seccomp_error);
    }
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a new user namespace cleared it
  return true;
}

std::optional<std::string> PreparedSandbox::failure(const SandboxReport& report) const {
  if (report.failed_step == SandboxReport::Step::none) {
    return std::nullopt;
  }
  return fmt::format("cannot sandbox the candidate: the {} layer failed in the child ({}: {}). {}",
                     step_layer(report.failed_step), errno_name(report.failed_errno),
                     std::strerror(report.failed_errno), mode_hint());
}

std::optional<std::uint64_t> PreparedSandbox::memory_limit() const { return memory_limit_; }

void PreparedSandbox::record_child_layers(SandboxReport& report, int landlock_error,
                                          int seccomp_error) const {
  if (landlock_) {
    report.landlock_error = landlock_error;
    report.landlock_applied = landlock_error == 0;
    if (!report.landlock_applied && require_landlock_ && report.failed_step == SandboxReport::Step::none) {
      report.failed_step = SandboxReport::Step::landlock;
      report.failed_errno = landlock_error;
    }
  }
  if (seccomp_) {
    report.seccomp_error = seccomp_error;
    report.seccomp_applied = seccomp_error == 0;
    if (!report.seccomp_applied && require_seccomp_ && report.failed_step == SandboxReport::Step::none) {
      report.failed_step = SandboxReport::Step::seccomp;
      report.failed_errno = seccomp_error;
    }
  }
}

nlohmann::json PreparedSandbox::status(const SandboxReport& report) const {
  nlohmann::json layers = nlohmann::json::object();
  auto set = [&](const char* layer, const std::string& active) {
    const std::string off = layer_off(layer);
    layers[layer] = off.empty() ? active : off;
  };
  set(kLayerNamespaces, !try_namespaces_          ? "off: not requested"
                        : report.namespaces_tried ? NamespaceIsolation::describe(report.namespaces)
                                                  : "not reached");
  set(kLayerRlimits, !limits_                 ? "off"
                     : report.rlimits_applied ? limits_->describe(report.namespaces.user_namespace)
                                              : "failed: " + errno_name(report.rlimit_error));
  set(kLayerCapabilities, !capabilities_              ? "off"
                          : report.capabilities_tried ? CapabilityDrop::describe(report.capabilities)
                                                      : "not reached");
  layers["no_new_privs"] = mode_ == SandboxMode::off ? "off: KFORGE_SANDBOX=off" : "on";
  if (landlock_) {
    set(kLayerLandlock,
        report.landlock_applied ? landlock_->describe() : "failed: " + errno_name(report.landlock_error));
    set(kLayerLandlockScopes, !scopes_unavailable_.empty() ? scopes_unavailable_
                              : report.landlock_applied
                                  ? "on (no signals to, no abstract UNIX sockets of processes outside)"
                                  : "failed: " + errno_name(report.landlock_error));
  } else {
    set(kLayerLandlock, landlock_unavailable_);
    set(kLayerLandlockScopes, scopes_unavailable_);
  }
  set(kLayerSeccomp, !seccomp_                ? seccomp_unavailable_
                     : report.seccomp_applied ? seccomp_->describe()
                                              : "failed: " + errno_name(report.seccomp_error));
  set(kLayerMemoryWatchdog,
      memory_limit_ ? MemoryWatchdog(*memory_limit_).describe() : std::string("off: no limit set"));
  return {{"mode", to_string(mode_)}, {"layers", std::move(layers)}, {"warnings", warnings_}};
}

}  // namespace kforge::runner
