#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/capability_drop.hpp"
#include "runner/landlock_ruleset.hpp"
#include "runner/namespace_isolation.hpp"
#include "runner/resource_limits.hpp"
#include "runner/sandbox_policy.hpp"
#include "runner/seccomp_filter.hpp"

namespace kforge::runner {

// What this kernel offers the sandbox. Detected before each start; tests pass a made-up one.
struct KernelSupport {
  int landlock_abi = 0;   // > 0: the Landlock ABI; otherwise -errno of the version query
  int seccomp_error = 0;  // 0: seccomp filters can be installed; otherwise why not
  static KernelSupport detect();
};

// What the forked child did, sent to the supervisor in one write() before exec.
struct SandboxReport {
  enum class Step : int { none, no_new_privs, network_namespace, rlimits, capabilities, landlock, seccomp };
  NamespaceIsolation::Outcome namespaces;
  CapabilityDrop::Outcome capabilities;
  bool namespaces_tried = false;
  bool capabilities_tried = false;
  bool rlimits_applied = false;
  bool landlock_applied = false;
  bool seccomp_applied = false;
  int rlimit_error = 0;
  int landlock_error = 0;
  int seccomp_error = 0;
  Step failed_step = Step::none;  // a required layer that could not be applied: the child did not exec
  int failed_errno = 0;
};

// The sandbox of one worker, layer by layer. prepare() runs in the supervisor and does everything that
// allocates or may fail for a reason the user must hear about (the BPF program, the Landlock ruleset,
// the limits); apply_in_child() runs between fork and exec and makes only async-signal-safe system calls.
// Every layer is reported: "on (...)", "off: <why>" or "unavailable: <why>", never silently missing.
class PreparedSandbox {
 public:
  // Throws std::runtime_error (an environment error) when the mode requires a layer this kernel lacks.
  static PreparedSandbox prepare(const SandboxPolicy& policy, const KernelSupport& kernel);

  // In the forked child. False when a required layer failed: report says which, and the child must not exec.
  bool apply_in_child(SandboxReport& report) noexcept;

  // {"mode": ..., "layers": {layer: "on (...)" | "off: ..." | "unavailable: ..."}, "warnings": [...]}.
  nlohmann::json status(const SandboxReport& report) const;
  // The message of a required layer the child could not apply, if any.
  std::optional<std::string> failure(const SandboxReport& report) const;
  // The resident-memory limit for the supervisor's watchdog, when that layer is on.
  std::optional<std::uint64_t> memory_limit() const;

  // For a candidate forked by the zygote: it inherits the zygote's namespaces, limits and capabilities
  // (already in `report`) and installs this sandbox's Landlock ruleset and seccomp program itself.
  const LandlockRuleset* landlock() const { return landlock_ ? &*landlock_ : nullptr; }
  const SeccompFilter* seccomp() const { return seccomp_ ? &*seccomp_ : nullptr; }
  bool active() const { return mode_ != SandboxMode::off; }
  // Records what the forked child reported (0 or errno per layer) and marks a required layer that failed.
  void record_child_layers(SandboxReport& report, int landlock_error, int seccomp_error) const;

 private:
  PreparedSandbox() = default;
  bool required(const char* layer) const;
  std::string layer_off(const char* layer) const;

  SandboxMode mode_ = SandboxMode::on;
  std::set<std::string> disabled_;
  bool try_namespaces_ = false;
  bool require_namespaces_ = false;
  bool require_rlimits_ = false;
  bool require_capabilities_ = false;
  bool require_landlock_ = false;
  bool require_seccomp_ = false;
  NamespaceIsolation namespaces_;
  std::optional<ResourceLimits> limits_;
  std::optional<CapabilityDrop> capabilities_;
  std::optional<LandlockRuleset> landlock_;
  std::string landlock_unavailable_;
  std::string scopes_unavailable_;
  std::optional<SeccompFilter> seccomp_;
  std::string seccomp_unavailable_;
  std::optional<std::uint64_t> memory_limit_;
  std::vector<std::string> warnings_;
};

}  // namespace kforge::runner
