#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner/candidate_sandbox.hpp"
#include "runner/python_environment.hpp"
#include "runner/worker_process.hpp"

namespace kforge::runner {

enum class WorkerRole { judge, candidate };

// The folder of the scratch space that holds the candidate's code (<scratch>/code/candidate.py): the
// candidate may read it, never write it.
inline constexpr const char* kCandidateCodeFolder = "code";

// The candidate worker's private Triton cache in a scratch space: compiled kernels appear there.
std::filesystem::path candidate_compile_cache(const std::filesystem::path& scratch);

// The command line and scrubbed environment of a judge or candidate worker. On the CPU the
// candidate runs Triton's interpreter; each worker gets its own Triton cache inside the scratch folder.
// A candidate is always sandboxed: this overload protects kforge itself but knows no judge to protect.
WorkerLaunch make_worker_launch(WorkerRole role, const PythonEnvironment& python,
                                const std::filesystem::path& scratch, bool cpu_device);

// The judge of a problem whose code is not the operator's (sent to kforge serve by a client): the
// candidate's sandbox and scrubbed environment, reading the system, Python, the kforge package and the
// problem's own folder, writing only its private folder and `transfer_root` (under which every evaluation
// of this judge makes its transfer folder); on a GPU also /dev/shm and the GPU's device files
// (docs/sandbox.md, "The judge of a client's problem").
WorkerLaunch make_sandboxed_judge_launch(const PythonEnvironment& python,
                                         const std::filesystem::path& scratch, bool cpu_device,
                                         const std::filesystem::path& problem_folder,
                                         const std::filesystem::path& transfer_root, double call_timeout_s);

// The candidate worker in its sandbox (see candidate_sandbox.hpp), with an environment that carries
// nothing of the user's but what Python, CUDA and Triton need; HOME and TMPDIR are its private folder.
WorkerLaunch make_candidate_launch(const PythonEnvironment& python, const std::filesystem::path& scratch,
                                   bool cpu_device, const CandidateSandboxContext& context);

// The launch's view of the GPUs, replacing any it had: CUDA_VISIBLE_DEVICES=`visible`, and with none visible
// ("") Triton's interpreter, set at launch because Triton reads TRITON_INTERPRET at its import (its own @jit
// functions, tl.max and the rest, are made interpreted then), and one thread in PyTorch's and numpy's pools.
void set_visible_gpus(WorkerLaunch& launch, const std::string& visible);

// A worker module run once as a program, `python -m kforge.worker.MODULE ARGUMENTS`, behind `wrapper`
// (Nsight Compute and its flags) when that is not empty: the profile target and the ceilings
// measurement. The candidate's scrubbed environment and a private folder, but not its sandbox: ncu
// injects into the process it profiles, which Landlock and seccomp would stop. The profile target only
// runs candidates the verdict pipeline accepted (docs/threat-model.md).
WorkerLaunch make_program_launch(const std::string& module, const PythonEnvironment& python,
                                 const std::filesystem::path& scratch,
                                 const std::vector<std::string>& wrapper,
                                 const std::vector<std::string>& arguments);

// A worker module run once as a program on untrusted code (a TritonBench model answer with its test
// block): the candidate's environment and sandbox, the module's own private folder (writable) and the
// scratch space's code folder (readable).
WorkerLaunch make_sandboxed_program_launch(const std::string& module, const PythonEnvironment& python,
                                           const std::filesystem::path& scratch, bool cpu_device,
                                           const std::vector<std::string>& arguments,
                                           const CandidateSandboxContext& context);

}  // namespace kforge::runner
