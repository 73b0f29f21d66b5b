#pragma once

#include <filesystem>
#include <string>

#include "runner/candidate_sandbox.hpp"
#include "runner/python_environment.hpp"
#include "runner/worker_process.hpp"

namespace kforge::runner {

enum class WorkerRole { judge, candidate };

// The folder of the scratch space that holds the candidate's code (<scratch>/code/candidate.py): the
// candidate may read it, never write it.
inline constexpr const char* kCandidateCodeFolder = "code";

// The command line and scrubbed environment of a judge or candidate worker. On the CPU the
// candidate runs Triton's interpreter; each worker gets its own Triton cache inside the scratch folder.
// A candidate is always sandboxed: this overload protects kforge itself but knows no judge to protect.
WorkerLaunch make_worker_launch(WorkerRole role, const PythonEnvironment& python,
                                const std::filesystem::path& scratch, bool cpu_device);

// The candidate worker in its sandbox (see candidate_sandbox.hpp), with an environment that carries
// nothing of the user's but what Python, CUDA and Triton need; HOME and TMPDIR are its private folder.
WorkerLaunch make_candidate_launch(const PythonEnvironment& python, const std::filesystem::path& scratch,
                                   bool cpu_device, const CandidateSandboxContext& context);

}  // namespace kforge::runner
