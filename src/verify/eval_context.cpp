#include "verify/eval_context.hpp"

namespace kforge::verify {

void EvalContext::fail_stage(StageName name, const std::string& summary, const CallResult& call) const {
  auto& stage = verdict.stage(name);
  stage.status = StageStatus::failed;
  stage.summary = summary;
  const std::string log = candidate != nullptr ? trim_log(candidate->log_tail(), candidate_code_path) : "";
  stage.details["error"] = call.to_details(log);
  verdict.outcome = Outcome::rejected;
}

void EvalContext::fail_evaluation(const std::string& kind, const std::string& message) const {
  verdict.outcome = Outcome::error;
  verdict.error = EvaluationError{kind, message};
}

}  // namespace kforge::verify
