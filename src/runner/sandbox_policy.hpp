#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kforge::runner {

// How hard to insist on the sandbox. `on` (the default) refuses to start the candidate without the two
// layers that protect the verdict (seccomp and Landlock); `strict` also requires the network namespace
// and Landlock's scopes; `best_effort` applies what the kernel offers; `off` is the user's explicit opt-out.
enum class SandboxMode { strict, on, best_effort, off };

// The layers by name, as the status and KFORGE_SANDBOX_DISABLE spell them.
inline constexpr const char* kLayerNamespaces = "network_namespace";
inline constexpr const char* kLayerRlimits = "rlimits";
inline constexpr const char* kLayerCapabilities = "capabilities";
inline constexpr const char* kLayerLandlock = "landlock";
inline constexpr const char* kLayerLandlockScopes = "landlock_scopes";
inline constexpr const char* kLayerSeccomp = "seccomp";
inline constexpr const char* kLayerMemoryWatchdog = "memory_watchdog";

// Upper bounds on what one sandboxed process (and its children) may use; 0 leaves a limit unset.
struct ResourceBudget {
  std::uint64_t cpu_seconds = 0;          // RLIMIT_CPU: a backstop behind the per-call wall-clock timeout
  std::uint64_t open_files = 1024;        // RLIMIT_NOFILE
  std::uint64_t file_size_bytes = 0;      // RLIMIT_FSIZE
  std::uint64_t processes = 0;            // RLIMIT_NPROC, applied only inside a user namespace
  std::uint64_t address_space_bytes = 0;  // RLIMIT_AS: CPU runs only, CUDA reserves huge virtual ranges
  std::uint64_t resident_bytes = 0;       // the supervisor's watchdog on the group's resident memory
};

// Everything the sandbox needs to know, decided in the supervisor before the fork.
struct SandboxPolicy {
  SandboxMode mode = SandboxMode::on;
  std::set<std::string> disabled_layers;                    // KFORGE_SANDBOX_DISABLE, reported as such
  std::vector<std::filesystem::path> read_only_paths;       // read and execute beneath each
  std::vector<std::filesystem::path> read_write_paths;      // full access beneath each
  std::vector<std::filesystem::path> must_stay_unreadable;  // e.g. the problem file: warned if reachable
  std::vector<pid_t> protected_pids;  // processes it may not signal (kforge, the judge); groups too
  ResourceBudget budget;
  bool network_namespace = true;  // try a new user+network namespace (no interfaces but loopback)

  bool layer_enabled(const std::string& layer) const { return !disabled_layers.contains(layer); }
};

// KFORGE_SANDBOX=strict|on|best-effort|off (default on). Throws std::runtime_error on another value.
SandboxMode sandbox_mode_from_environment();
// KFORGE_SANDBOX_DISABLE=layer,layer: layers switched off one by one, e.g. to find which breaks a GPU.
std::set<std::string> disabled_layers_from_environment();
// KFORGE_CANDIDATE_MEMORY_GIB: the candidate's resident-memory limit in bytes; unset, half the memory
// still available to kforge (MemAvailable, lowered by its cgroup's limit), between 1 and 32 GiB.
std::uint64_t memory_limit_from_environment();
// KFORGE_CANDIDATE_GPU_MEMORY_GIB: the candidate's GPU memory limit in bytes; nullopt when unset (kforge
// derives one from the problem's footprint: verify::candidate_gpu_memory_limit).
std::optional<std::uint64_t> gpu_memory_limit_from_environment();

std::string to_string(SandboxMode mode);

}  // namespace kforge::runner
