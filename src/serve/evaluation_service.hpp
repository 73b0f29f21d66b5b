#pragma once

#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "reward/reward_spec.hpp"
#include "schedule/eval_engine.hpp"
#include "serve/job_table.hpp"
#include "serve/service_metrics.hpp"
#include "verify/eval_settings.hpp"

namespace kforge::serve {

struct ServiceOptions {
  schedule::SchedulerOptions engine;  // devices, jobs per device, judges kept warm, store, zygote
  verify::EvalSettings base;          // settings every evaluation starts from (sizes, trials, timeouts)
};

// One request's work: completions of one problem, with the reward wanted.
struct EvaluationRequest {
  std::filesystem::path problem;
  bool problem_trusted = false;  // the operator's own problem: its judge runs outside the sandbox
  std::vector<std::string> completions;
  std::size_t max_completion_bytes = verify::kMaxCandidateBytes;  // larger ones are rejected (extract)
  reward::RewardSpec reward;
  bool include_verdict = false;
};

// Runs every request on one shared evaluation engine (warm judges and zygotes, one GPU gate per
// device), writing each completion's result (outcome, summary, speedup, reward and its components)
// into the job table as it finishes. Completions that the static rules reject are answered while
// the request is submitted, without a judge.
class EvaluationService {
 public:
  EvaluationService(ServiceOptions options, JobTable& jobs, ServiceMetrics& metrics);
  ~EvaluationService();
  EvaluationService(const EvaluationService&) = delete;
  EvaluationService& operator=(const EvaluationService&) = delete;
  EvaluationService(EvaluationService&&) = delete;
  EvaluationService& operator=(EvaluationService&&) = delete;

  // Submits the request; returns its job id. Throws std::runtime_error while draining.
  std::string submit(const EvaluationRequest& request, nlohmann::json info);
  // Stops taking new requests and returns when every submitted job has finished.
  void drain();
  bool draining() const;
  schedule::EngineCounters counters() const;

 private:
  ServiceOptions options_;
  JobTable& jobs_;
  ServiceMetrics& metrics_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t submitting_ = 0;  // submits past the draining check and not yet handed to the engine
  bool draining_ = false;
  schedule::EvalEngine engine_;
};

// The result line of one completion: outcome, failed stage, summary, speedup, reward (docs/rewards.md).
nlohmann::json completion_result(const schedule::EvalOutcome& outcome, const reward::RewardSpec& spec,
                                 bool include_verdict);

}  // namespace kforge::serve
