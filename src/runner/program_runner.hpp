#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runner/candidate_sandbox.hpp"
#include "runner/candidate_zygote.hpp"
#include "runner/lasting_thread.hpp"
#include "runner/program_pause.hpp"
#include "runner/program_run.hpp"
#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"

namespace kforge::runner {

// A scratch space for an untrusted program and the zygote whose sandbox opens it (null: none), kept alive
// together: a replacement zygote could not reach this folder.
struct UntrustedScratch {
  std::shared_ptr<CandidateZygote> zygote;
  ScratchSpace scratch;
};

// Worker modules run once as programs on one device (TritonBench's file runs, captures, comparisons),
// forked from two warm zygotes, one trusted (the user's own files) and one sandboxed (untrusted code),
// so that no program pays the interpreter start and the imports (seconds each). A zygote starts on first
// use and is replaced when lost; when one cannot start, or `warm` is off, programs start fresh. Each
// program sees only its device: the GPU's number in CUDA_VISIBLE_DEVICES, none on the CPU (Triton's
// interpreter). Thread-safe.
class ProgramRunner {
 public:
  ProgramRunner(PythonEnvironment python, std::string device, bool warm);
  ProgramRunner(const ProgramRunner&) = delete;
  ProgramRunner& operator=(const ProgramRunner&) = delete;
  ProgramRunner(ProgramRunner&&) = delete;
  ProgramRunner& operator=(ProgramRunner&&) = delete;
  ~ProgramRunner();

  const std::string& device() const { return device_; }

  // `python -m kforge.worker.MODULE ARGUMENTS` outside the sandbox, in `folder` (its private folder is
  // folder/MODULE); `result` is the file the module answers in.
  // `pause` (optional) is attached to the program's process group while it runs.
  ProgramRun run_trusted(const std::string& module, const std::filesystem::path& folder,
                         const std::vector<std::string>& arguments, const std::filesystem::path& result,
                         double timeout_s, ProgramPause* pause = nullptr);
  // A scratch space for an untrusted program: inside the sandboxed zygote's folders when it runs.
  UntrustedScratch untrusted_scratch();
  // The module in the candidate's sandbox (make_sandboxed_program_launch) in `scratch`, forked from the
  // zygote the scratch space belongs to (started fresh when it has none or it is lost).
  ProgramRun run_untrusted(const std::string& module, const UntrustedScratch& scratch,
                           const std::vector<std::string>& arguments, const CandidateSandboxContext& context,
                           const std::filesystem::path& result, double timeout_s,
                           ProgramPause* pause = nullptr);

  // How many programs were forked and how many started fresh (for the run's phase report).
  std::size_t forked() const;
  std::size_t started_fresh() const;

 private:
  struct Slot {
    std::mutex mutex;
    std::shared_ptr<CandidateZygote> zygote;
    int starts = 0;
  };
  std::shared_ptr<CandidateZygote> zygote(Slot& slot, bool trusted);
  ProgramRun run(WorkerLaunch launch, const std::shared_ptr<CandidateZygote>& warm,
                 const std::filesystem::path& result, double timeout_s, ProgramPause* pause);

  PythonEnvironment python_;
  std::string device_;
  bool warm_;
  Slot trusted_;
  Slot sandboxed_;
  mutable std::mutex counts_mutex_;
  std::size_t forked_ = 0;
  std::size_t fresh_ = 0;
  LastingThread starter_;  // starts the zygotes; last, so it is joined before the slots go
};

}  // namespace kforge::runner
