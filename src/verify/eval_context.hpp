#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "runner/worker_process.hpp"
#include "verify/eval_settings.hpp"
#include "verify/runtime_evidence.hpp"
#include "verify/verdict.hpp"
#include "verify/worker_call.hpp"

namespace kforge::verify {

// What the stages of one evaluation share: the settings, the verdict being filled in and the two
// workers. Stages write their own StageResult; a failed stage sets the verdict's outcome.
struct EvalContext {
  const EvalSettings& settings;
  Verdict& verdict;
  runner::WorkerProcess* judge = nullptr;
  runner::WorkerProcess* candidate = nullptr;
  std::string candidate_code_path;  // the file the candidate worker imports
  std::string shm_prefix;           // names of this evaluation's shared-memory buffers
  bool on_gpu = false;
  RuntimeEvidence evidence;  // traces of the candidate's forward calls, filled by correctness and runtime

  std::chrono::milliseconds call_timeout() const {
    return std::chrono::milliseconds(static_cast<long>(settings.timeout_s * 1000.0));
  }

  // Marks a stage failed because the candidate's worker reported an error or died; the stage gets a
  // finding named after the failure (forward-error, timeout, crash, ...).
  void fail_stage(StageName name, const std::string& summary, const CallResult& call) const;
  // Marks a stage failed with findings that say which check failed.
  void reject_stage(StageName name, const std::string& summary, std::vector<rules::Finding> findings) const;
  // Marks the whole evaluation as an error that is not the candidate's fault.
  void fail_evaluation(const std::string& kind, const std::string& message) const;
};

}  // namespace kforge::verify
