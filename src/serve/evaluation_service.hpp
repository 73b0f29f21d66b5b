#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "reward/reward_spec.hpp"
#include "schedule/eval_scheduler.hpp"
#include "serve/job_table.hpp"
#include "serve/service_metrics.hpp"
#include "verify/eval_settings.hpp"

namespace kforge::serve {

struct ServiceOptions {
  schedule::SchedulerOptions scheduler;  // devices, jobs per device, store, zygote
  verify::EvalSettings base;             // settings every evaluation starts from (sizes, trials, timeouts)
  std::size_t concurrent_jobs = 2;       // evaluation jobs (requests) run at once; the rest wait in a queue
};

// One request's work: completions of one problem, with the reward wanted.
struct EvaluationRequest {
  std::filesystem::path problem;
  std::vector<std::string> completions;
  reward::RewardSpec reward;
  bool include_verdict = false;
};

// Runs evaluation jobs on the batch engine, `concurrent_jobs` at a time, writing each completion's
// result (outcome, summary, speedup, reward and its components) into the job table as it finishes.
class EvaluationService {
 public:
  EvaluationService(ServiceOptions options, JobTable& jobs, ServiceMetrics& metrics);
  ~EvaluationService();
  EvaluationService(const EvaluationService&) = delete;
  EvaluationService& operator=(const EvaluationService&) = delete;
  EvaluationService(EvaluationService&&) = delete;
  EvaluationService& operator=(EvaluationService&&) = delete;

  // Queues the request; returns its job id. Throws std::runtime_error while draining.
  std::string submit(EvaluationRequest request, nlohmann::json info);
  // Stops taking new requests and returns when every queued and running job has finished.
  void drain();
  bool draining() const;

 private:
  void work();
  void run(const std::string& id, const EvaluationRequest& request);

  ServiceOptions options_;
  JobTable& jobs_;
  ServiceMetrics& metrics_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::pair<std::string, EvaluationRequest>> queue_;
  std::size_t running_ = 0;
  bool draining_ = false;
  std::vector<std::thread> workers_;
};

// The result line of one completion: outcome, failed stage, summary, speedup, reward (docs/rewards.md).
nlohmann::json completion_result(const schedule::EvalOutcome& outcome, const reward::RewardSpec& spec,
                                 bool include_verdict);

}  // namespace kforge::serve
