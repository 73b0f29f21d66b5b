#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "schedule/eval_job.hpp"
#include "store/result_store.hpp"

namespace kforge::schedule {

struct SchedulerOptions {
  std::vector<std::string> devices{"cpu"};  // "cpu" or "cuda:N"; GPU work is spread over all of them
  std::size_t jobs_per_device = 4;          // evaluations in flight per device (compile and correctness)
  std::size_t sessions_per_device = 8;      // problems whose judge is alive at once per device (>= jobs)
  store::ResultStore* store = nullptr;      // null: no result store
  bool reuse_stored = true;                 // false: evaluate again (results are still stored)
  bool use_zygote = true;                   // fork candidates from a zygote per device (false: fresh starts)
  bool screen_first = true;                 // answer extract/static rejections without starting a judge
  std::optional<std::filesystem::path> python;  // interpreter for judges and candidates (null: found)
  // Called once per job as it finishes (from a worker thread, serialised).
  std::function<void(const EvalOutcome&)> on_result;
};

// Runs one batch on an EvalEngine of its own (eval_engine.hpp) and returns when it is done: stored
// verdicts and static rejections come back at once; the rest are evaluated `jobs_per_device` at a
// time per device, with one judge per (device, problem) reused by all of that problem's candidates,
// round-robin over problems. Without `options.python` the first job's interpreter is used.
class EvalScheduler {
 public:
  explicit EvalScheduler(SchedulerOptions options);
  std::vector<EvalOutcome> run(std::vector<EvalJob> jobs);

 private:
  SchedulerOptions options_;
};

}  // namespace kforge::schedule
