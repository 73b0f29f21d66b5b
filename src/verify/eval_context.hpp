#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "runner/gpu_gate.hpp"
#include "runner/worker_process.hpp"
#include "verify/call_deadlines.hpp"
#include "verify/eval_observer.hpp"
#include "verify/eval_settings.hpp"
#include "verify/input_seeds.hpp"
#include "verify/problem_session.hpp"
#include "verify/runtime_evidence.hpp"
#include "verify/verdict.hpp"
#include "verify/worker_call.hpp"

namespace kforge::verify {

// What the stages of one evaluation share: the settings, the verdict being filled in, the problem's
// (shared) judge session and this evaluation's candidate worker. Stages write their own StageResult; a
// failed stage sets the verdict's outcome.
struct EvalContext {
  const EvalSettings& settings;
  Verdict& verdict;
  ProblemSession* session = nullptr;
  runner::WorkerProcess* candidate = nullptr;
  std::string candidate_code_path;  // the file the candidate worker imports
  std::string transfer_dir;         // this evaluation's CPU tensor buffers
  std::string evaluation_id;        // tells this evaluation's trials apart in the shared judge
  runner::GpuGate* gate = nullptr;  // other evaluations on the same GPU; null when none share it
  bool timing_exclusive = false;    // the performance stage holds the GPU alone: no shared use inside
  bool on_gpu = false;
  // Seconds this evaluation's calls waited for the gate (other evaluations' timing); mutable because
  // the call helpers are const and only count.
  mutable double gpu_wait_s = 0.0;
  RuntimeEvidence evidence;  // traces of the candidate's forward calls, filled by correctness and runtime
  CallDeadlines deadlines;   // each call's time limit (derived from the reference's own time)
  EvalObserver* observer = nullptr;  // who watches this evaluation live (kforge eval's terminal); may be null
  InputSeeds seeds{process_input_key(), settings.seed};  // every input seed, from the secret key
  // The reference runs with perturbed parameters unless ModelNew's could not be found (lenient only).
  bool parameters_perturbed = true;
  // The candidate worker built the problem's Model to time it beside the candidate (docs/verdict.md).
  bool reference_beside = false;

  // A judge request for this evaluation: its trial key is tagged with the evaluation id and the
  // transfer folder added; on a GPU the call counts as shared use of the gate.
  CallResult judge_call(nlohmann::json request) const;
  // A request to this evaluation's candidate worker, with the same gate rule, within `limit` (by
  // default the limit of a request that runs forward once).
  CallResult candidate_call(const nlohmann::json& request) const;
  CallResult candidate_call(const nlohmann::json& request, const runner::CallLimit& limit) const;
  // A candidate request that runs only kforge's own worker code and launches no kernel (device set-up
  // before the candidate's code is imported): it does not wait for the gate, and gets the start-up limit.
  CallResult candidate_call_outside_gate(const nlohmann::json& request) const;

  // Marks a stage failed because the candidate's worker reported an error or died; the stage gets a
  // finding named after the failure (forward-error, timeout, crash, ...).
  void fail_stage(StageName name, const std::string& summary, const CallResult& call) const;
  // Marks a stage failed with findings that say which check failed.
  void reject_stage(StageName name, const std::string& summary, std::vector<rules::Finding> findings) const;
  // Tells the observer, if any, what `stage` is doing now.
  void progress(StageName stage, const std::string& text) const {
    if (observer != nullptr) {
      observer->progress(stage, text);
    }
  }
  // Marks the whole evaluation as an error that is not the candidate's fault.
  void fail_evaluation(const std::string& kind, const std::string& message) const;
  // The judge failed on `call`: the problem's error, unless the judge says the machine failed it
  // (kind "environment": the GPU ran out of memory).
  void fail_judge(const std::string& message, const CallResult& call) const;
};

}  // namespace kforge::verify
