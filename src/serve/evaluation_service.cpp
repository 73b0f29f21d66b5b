#include "serve/evaluation_service.hpp"

#include <algorithm>
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
    : options_(std::move(options)), jobs_(jobs), metrics_(metrics), engine_(options_.engine) {}

EvaluationService::~EvaluationService() { drain(); }

std::string EvaluationService::submit(const EvaluationRequest& request, nlohmann::json info) {
  {
    const std::lock_guard lock(mutex_);
    if (draining_) {
      throw std::runtime_error("the service is shutting down and takes no new evaluations");
    }
    ++submitting_;
  }
  auto id = jobs_.create(request.completions.size(), std::move(info));
  jobs_.start(id);
  std::vector<schedule::EvalJob> work;
  for (std::size_t i = 0; i < request.completions.size(); ++i) {
    schedule::EvalJob job;
    job.index = i;
    job.problem = request.problem.parent_path().filename().string();
    job.settings = options_.base;
    job.settings.problem_path = request.problem;
    job.settings.problem_trusted = request.problem_trusted;
    job.settings.derived_call_limits = true;  // a hang must cost the service seconds (docs/verdict.md)
    job.settings.candidate_path = "<inline>";
    job.settings.candidate_text = request.completions[i];
    job.settings.max_candidate_bytes =
        std::min<std::uintmax_t>(job.settings.max_candidate_bytes, request.max_completion_bytes);
    work.push_back(std::move(job));
  }
  // Runs on the engine's threads (or inside submit): nothing may escape, or the service would stop.
  auto on_result = [this, id, spec = request.reward,
                    include_verdict = request.include_verdict](const schedule::EvalOutcome& outcome) {
    try {
      metrics_.evaluation(text_field(outcome.verdict, "outcome", "error"),
                          text_field(outcome.verdict, "failed_stage", ""), outcome.seconds);
      jobs_.set_result(id, outcome.index, completion_result(outcome, spec, include_verdict));
    } catch (const std::exception& error) {
      jobs_.set_result(
          id, outcome.index,
          {{"index", outcome.index}, {"outcome", "error"}, {"summary", error.what()}, {"reward", nullptr}});
    }
  };
  try {
    engine_.submit(std::move(work), on_result, [this, id]() { jobs_.finish(id); });
  } catch (const std::exception& error) {
    jobs_.finish(id, std::string("the evaluation engine failed: ") + error.what());
  }
  {
    const std::lock_guard lock(mutex_);
    --submitting_;
  }
  changed_.notify_all();
  return id;
}

void EvaluationService::drain() {
  {
    std::unique_lock lock(mutex_);
    draining_ = true;
    changed_.wait(lock, [this]() { return submitting_ == 0; });
  }
  engine_.wait_idle();
}

bool EvaluationService::draining() const {
  const std::lock_guard lock(mutex_);
  return draining_;
}

schedule::EngineCounters EvaluationService::counters() const { return engine_.counters(); }

}  // namespace kforge::serve
