#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "verify/eval_settings.hpp"

namespace kforge::schedule {

// One candidate to evaluate against one problem. `problem` names the problem for fairness, reports
// and metrics; `tags` travel unchanged into the result (sample id, source line, ...).
struct EvalJob {
  std::size_t index = 0;  // position in the batch
  std::string problem;
  verify::EvalSettings settings;  // the scheduler sets the device
  nlohmann::json tags = nlohmann::json::object();
};

// A finished job: the verdict document and how it was obtained.
struct EvalOutcome {
  std::size_t index = 0;
  std::string problem;
  nlohmann::json tags;
  nlohmann::json verdict;
  std::string device;
  bool from_store = false;
  int attempts = 0;  // evaluations run (a lost judge or worker is replaced and the job retried once)
  double seconds = 0.0;
  bool judge_lost = false;  // the problem's judge died during this evaluation (then it is retried)
};

}  // namespace kforge::schedule
