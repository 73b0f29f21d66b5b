#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_process.hpp"
#include "verify/baseline.hpp"
#include "verify/eval_settings.hpp"
#include "verify/verdict.hpp"
#include "verify/worker_call.hpp"

namespace kforge::verify {

// One judge worker for one problem on one device, shared by every candidate of that problem: the
// problem is imported and Model built once (in the sandbox when the problem is not trusted), reference
// outputs are cached by seed in the judge, and the baseline timing is kept here. Calls are serialised (the
// judge is one process); trials of concurrent evaluations are told apart by their evaluation id. A judge that
// dies marks the session lost: the scheduler replaces it and retries the evaluation.
class ProblemSession {
 public:
  // Called once the judge's process has started and before it loads the problem (Python, torch, the
  // problem's inputs: seconds): a single evaluation starts its candidate's worker there, so the two
  // start-ups overlap. What it throws is ignored.
  using WhileLoading = std::function<void(ProblemSession&)>;

  // Starts the judge and loads the problem. Never throws: a failure is kept in load_error().
  explicit ProblemSession(const EvalSettings& settings, const WhileLoading& while_loading = nullptr);
  ProblemSession(const ProblemSession&) = delete;
  ProblemSession& operator=(const ProblemSession&) = delete;
  ProblemSession(ProblemSession&&) = delete;
  ProblemSession& operator=(ProblemSession&&) = delete;
  ~ProblemSession();

  // The settings that decide what the judge computes; sessions are shared only between equal keys.
  static std::string key_of(const EvalSettings& settings);

  const std::optional<EvaluationError>& load_error() const { return load_error_; }
  const nlohmann::json& load_reply() const { return load_reply_; }
  const nlohmann::json& device() const { return device_; }
  bool on_gpu() const { return on_gpu_; }
  pid_t judge_pid() const;
  const runner::PythonEnvironment& python() const { return *python_; }
  const std::filesystem::path& problem_path() const { return problem_path_; }
  // One forward of the reference, measured by the judge at load (the basis of the call limits).
  std::optional<double> reference_call_s() const;
  // Every evaluation of this session makes its transfer folder here (a sandboxed judge writes only here).
  const std::filesystem::path& transfer_root() const { return scratch_->transfer_directory(); }
  // The judge's sandbox layers; null for a trusted problem's judge, which runs unsandboxed.
  nlohmann::json judge_sandbox() const;

  // A name for one more evaluation's trials in this session's judge.
  std::string new_evaluation_id() { return "e" + std::to_string(++evaluations_); }

  // One request to the judge, serialised with every other evaluation's.
  CallResult call(const nlohmann::json& request, std::chrono::milliseconds timeout);
  // The generalisation trial's instance of the problem (other sizes and constructor numbers), built in
  // the same judge on first use and kept for every later candidate: the judge's reply, with
  // "possible": false and a "reason" when no instance could be built.
  nlohmann::json generalisation(std::chrono::milliseconds timeout);
  // Frees what the judge holds for one evaluation (its trials and init buffers).
  void end_evaluation(const std::string& evaluation_id, std::chrono::milliseconds timeout);
  // The problem has nothing queued: the judge shrinks its cached references to an idle share of the
  // device's memory and hands its allocator's free blocks back, for the judges of other problems.
  void trim(std::chrono::milliseconds timeout);
  // True once the judge process died or hung: the session must not be used again.
  bool lost() const;

  std::optional<Baseline> baseline() const;
  void set_baseline(Baseline baseline);
  // Counts set_baseline() calls: the scheduler stores a baseline when it changed.
  std::uint64_t baseline_version() const;

 private:
  void start(const EvalSettings& settings, const WhileLoading& while_loading);

  std::filesystem::path problem_path_;
  std::optional<runner::PythonEnvironment> python_;
  std::optional<runner::ScratchSpace> scratch_;
  std::optional<runner::WorkerProcess> judge_;
  std::optional<EvaluationError> load_error_;
  nlohmann::json load_request_;
  nlohmann::json load_reply_;
  std::optional<nlohmann::json> generalisation_;  // cached load_generalisation reply
  std::mutex generalisation_mutex_;               // one load_generalisation, whoever asks first
  nlohmann::json device_;
  bool on_gpu_ = false;
  bool lost_ = false;
  std::string lost_reason_;  // the failure that lost the judge, repeated to later callers
  std::optional<Baseline> baseline_;
  std::uint64_t baseline_version_ = 0;
  std::atomic<std::uint64_t> evaluations_{0};
  mutable std::mutex mutex_;
};

}  // namespace kforge::verify
