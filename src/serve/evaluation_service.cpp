#include "serve/evaluation_service.hpp"

#include <stdexcept>

#include "reward/reward_formulas.hpp"

namespace kforge::serve {

namespace {

// A verdict field, or null when the verdict is not an object or lacks it.
nlohmann::json field(const nlohmann::json& verdict, const char* name) {
  if (!verdict.is_object()) {
    return nullptr;
  }
  const auto found = verdict.find(name);
  return found == verdict.end() ? nlohmann::json(nullptr) : *found;
}

std::string text_field(const nlohmann::json& verdict, const char* name, const std::string& otherwise) {
  const auto value = field(verdict, name);
  return value.is_string() ? value.get<std::string>() : otherwise;
}

}  // namespace

nlohmann::json completion_result(const schedule::EvalOutcome& outcome, const reward::RewardSpec& spec,
                                 bool include_verdict) {
  const auto& verdict = outcome.verdict;
  nlohmann::json result = {{"index", outcome.index},
                           {"outcome", text_field(verdict, "outcome", "error")},
                           {"failed_stage", field(verdict, "failed_stage")},
                           {"summary", text_field(verdict, "summary", "no verdict document")},
                           {"speedup", field(verdict, "speedup")},
                           {"reward", reward::to_json(reward::reward_for_verdict(verdict, spec), spec)},
                           {"from_store", outcome.from_store},
                           {"seconds", outcome.seconds}};
  if (include_verdict) {
    result["verdict"] = verdict;
  }
  return result;
}

EvaluationService::EvaluationService(ServiceOptions options, JobTable& jobs, ServiceMetrics& metrics)
    : options_(std::move(options)), jobs_(jobs), metrics_(metrics) {
  for (std::size_t i = 0; i < std::max<std::size_t>(options_.concurrent_jobs, 1); ++i) {
    workers_.emplace_back([this]() { work(); });
  }
}

EvaluationService::~EvaluationService() {
  drain();
  for (auto& worker : workers_) {
    worker.join();
  }
}

std::string EvaluationService::submit(EvaluationRequest request, nlohmann::json info) {
  const std::lock_guard lock(mutex_);
  if (draining_) {
    throw std::runtime_error("the service is shutting down and takes no new evaluations");
  }
  auto id = jobs_.create(request.completions.size(), std::move(info));
  queue_.emplace_back(id, std::move(request));
  changed_.notify_all();
  return id;
}

void EvaluationService::drain() {
  std::unique_lock lock(mutex_);
  draining_ = true;
  changed_.notify_all();
  changed_.wait(lock, [this]() { return queue_.empty() && running_ == 0; });
}

bool EvaluationService::draining() const {
  const std::lock_guard lock(mutex_);
  return draining_;
}

void EvaluationService::work() {
  while (true) {
    std::pair<std::string, EvaluationRequest> next;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this]() { return !queue_.empty() || draining_; });
      if (queue_.empty()) {
        return;  // draining and nothing left
      }
      next = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    run(next.first, next.second);
    const std::lock_guard lock(mutex_);
    --running_;
    changed_.notify_all();
  }
}

void EvaluationService::run(const std::string& id, const EvaluationRequest& request) {
  jobs_.start(id);
  std::vector<schedule::EvalJob> work;
  for (std::size_t i = 0; i < request.completions.size(); ++i) {
    schedule::EvalJob job;
    job.index = i;
    job.problem = request.problem.parent_path().filename().string();
    job.settings = options_.base;
    job.settings.problem_path = request.problem;
    job.settings.candidate_path = "<inline>";
    job.settings.candidate_text = request.completions[i];
    work.push_back(std::move(job));
  }
  auto scheduler = options_.scheduler;
  scheduler.on_result = [&](const schedule::EvalOutcome& outcome) {
    // Runs on the scheduler's threads: nothing may escape, or the whole service would stop.
    try {
      metrics_.evaluation(text_field(outcome.verdict, "outcome", "error"),
                          text_field(outcome.verdict, "failed_stage", ""), outcome.seconds);
      jobs_.set_result(id, outcome.index,
                       completion_result(outcome, request.reward, request.include_verdict));
    } catch (const std::exception& error) {
      jobs_.set_result(
          id, outcome.index,
          {{"index", outcome.index}, {"outcome", "error"}, {"summary", error.what()}, {"reward", nullptr}});
    }
  };
  try {
    schedule::EvalScheduler(scheduler).run(std::move(work));
    jobs_.finish(id);
  } catch (const std::exception& error) {
    jobs_.finish(id, std::string("the evaluation engine failed: ") + error.what());
  }
}

}  // namespace kforge::serve
