#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "runner/candidate_sandbox.hpp"
#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_process.hpp"

namespace kforge::runner {

// A Python process per device that has imported torch, triton and the candidate worker (CUDA not
// initialised) and forks a fresh candidate process per candidate, saving the interpreter start and the
// imports (seconds) on every candidate.
//
// The zygote runs in the candidate sandbox minus seccomp (rlimits, capabilities, network namespace,
// Landlock over all its candidates' folders and the parent of every transfer folder). Each forked
// candidate then sets its own process group, restricts itself with the Landlock ruleset kforge built
// for exactly that candidate and installs the same seccomp program as a freshly started candidate,
// before it reads its first request. The zygote forks
// twice, so the candidate is re-parented to kforge (a child subreaper) and is waited for like any worker.
//
// A zygote also forks programs: a worker module run once (python/kforge/worker/zygote.py, PROGRAMS), such
// as a TritonBench answer's file run, sandboxed like a candidate. A trusted zygote (start_trusted) runs
// outside the sandbox and forks only unsandboxed programs: those that run the user's own files.
class CandidateZygote {
 public:
  // Throws std::runtime_error when the zygote cannot start (then candidates are started fresh).
  static std::unique_ptr<CandidateZygote> start(const PythonEnvironment& python, bool cpu_device,
                                                double call_timeout_s);
  // A zygote outside the sandbox, for programs made by make_program_launch. Throws as start() does.
  static std::unique_ptr<CandidateZygote> start_trusted(const PythonEnvironment& python, bool cpu_device);

  CandidateZygote(const CandidateZygote&) = delete;
  CandidateZygote& operator=(const CandidateZygote&) = delete;
  CandidateZygote(CandidateZygote&&) = delete;
  CandidateZygote& operator=(CandidateZygote&&) = delete;
  ~CandidateZygote();

  // A scratch space inside the zygote's folders for one candidate, its transfer folder under
  // `transfer_parent` (the problem session's; ScratchSpace::transfer_parent() is open to the zygote).
  ScratchSpace new_scratch(const std::filesystem::path& transfer_parent) const;
  // Forks a sandboxed candidate for this scratch space; `context` as for make_candidate_launch. Throws
  // std::runtime_error when the zygote is gone (lost() is then true) or a required sandbox layer failed.
  WorkerProcess fork_candidate(const ScratchSpace& scratch, CandidateSandboxContext context);
  // Forks `launch` (make_sandboxed_program_launch for a sandboxed zygote and a scratch space of
  // new_scratch(); make_program_launch for a trusted one): its module and arguments, environment, working
  // folder and sandbox. Wait for it with run_to_exit. Throws as fork_candidate does, and
  // std::invalid_argument when the launch's sandbox does not match the zygote's.
  WorkerProcess fork_program(const WorkerLaunch& launch);
  // Before a candidate whose code imports torch._inductor (the Inductor teacher's): the zygote imports it
  // once, so that neither this candidate nor the next pays it. Nothing for other code; a zygote that
  // dies here is lost() (the candidate then starts fresh).
  void preload_for(const std::string& code);
  bool lost() const;
  pid_t pid() const;

 private:
  CandidateZygote(PythonEnvironment python, bool cpu_device, ScratchSpace scratch, WorkerProcess zygote,
                  bool trusted);
  // Sends one fork request for `launch` with `extra` fields and adopts the process it forked.
  WorkerProcess fork_launch(const WorkerLaunch& launch, const nlohmann::json& extra);

  PythonEnvironment python_;
  bool cpu_device_;
  ScratchSpace scratch_;  // parent of every candidate's scratch space; removed with the zygote
  WorkerProcess zygote_;
  bool lost_ = false;
  bool trusted_ = false;  // outside the sandbox: forks unsandboxed programs only
  bool inductor_loaded_ = false;
  mutable std::mutex mutex_;  // one fork request at a time on the zygote's channel
};

}  // namespace kforge::runner
