#include "schedule/eval_scheduler.hpp"

#include "schedule/eval_engine.hpp"

namespace kforge::schedule {

EvalScheduler::EvalScheduler(SchedulerOptions options) : options_(std::move(options)) {}

std::vector<EvalOutcome> EvalScheduler::run(std::vector<EvalJob> jobs) {
  auto options = options_;
  if (!options.python && !jobs.empty()) {
    options.python = jobs.front().settings.python;
  }
  std::vector<EvalOutcome> results;
  results.reserve(jobs.size());
  EvalEngine engine(options);
  // Callbacks are serialised by the engine, so the vector needs no lock of its own.
  engine.submit(std::move(jobs), [this, &results](const EvalOutcome& outcome) {
    if (options_.on_result) {
      options_.on_result(outcome);
    }
    results.push_back(outcome);
  });
  engine.wait_idle();
  return results;
}

}  // namespace kforge::schedule
