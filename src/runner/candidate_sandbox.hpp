#pragma once

#include <sys/types.h>

#include <filesystem>
#include <vector>

#include "runner/python_environment.hpp"
#include "runner/sandbox_policy.hpp"

namespace kforge::runner {

// What the evaluation knows that the candidate's sandbox depends on.
struct CandidateSandboxContext {
  std::vector<pid_t> protected_pids;  // the judge: the candidate may not signal it
  double call_timeout_s = 300.0;      // the per-call timeout; the CPU-time limit is derived from it
  std::vector<std::filesystem::path> secret_paths;  // e.g. the problem file: warned about if readable
  std::filesystem::path transfer_dir;  // this evaluation's tensor buffers (read-write); empty: none
};

// The candidate may read the system, the Python installation, the kforge package and its own code;
// write only its private folder (HOME, TMPDIR, Triton's cache) and its evaluation's transfer folder; on a
// GPU also /dev/shm (CUDA's IPC bookkeeping; tensors travel as CUDA IPC handles there) and the GPU's
// device files. On the CPU, /dev/shm stays closed: concurrent candidates cannot read each other's outputs.
// Mode, disabled layers and the memory limit come from KFORGE_SANDBOX, KFORGE_SANDBOX_DISABLE and
// KFORGE_CANDIDATE_MEMORY_GIB.
SandboxPolicy make_candidate_sandbox_policy(const PythonEnvironment& python,
                                            const std::filesystem::path& private_dir,
                                            const std::filesystem::path& code_dir, bool cpu_device,
                                            const CandidateSandboxContext& context);

}  // namespace kforge::runner
