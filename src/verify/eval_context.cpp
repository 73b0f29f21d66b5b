#include "verify/eval_context.hpp"

#include <fmt/format.h>

namespace kforge::verify {
namespace {

// The check id a failed worker call stands for, as findings and the hostile corpus name it.
std::string check_for_call(const CallResult& call) {
  if (call.kind == "timeout") {
    return "timeout";
  }
  if (call.kind == "crashed" || call.kind == "exited" || call.kind == "device_fault") {
    return "crash";
  }
  if (call.kind == "forward_error") {
    return "forward-error";
  }
  if (call.kind == "bad_output") {
    return "output-type";
  }
  if (call.kind == "compile_error") {
    return "compile-error";
  }
  if (call.kind == "gpu_memory_limit") {
    return "gpu-memory-limit";
  }
  if (call.kind == "memory_limit") {
    return "memory-limit";
  }
  return call.kind.empty() ? "worker-error" : call.kind;
}

}  // namespace

CallResult EvalContext::judge_call(nlohmann::json request) const {
  if (request.contains("trial")) {
    request["trial"] = fmt::format("{}:{}", evaluation_id, request["trial"].dump());
  }
  request["transfer_dir"] = transfer_dir;
  request["evaluation"] = evaluation_id;
  if (const auto op = request.value("op", ""); op == "start_trial" || op == "refresh_trial") {
    request["perturbed"] = parameters_perturbed;
  }
  const runner::GpuGate::SharedUse use(on_gpu && !timing_exclusive ? gate : nullptr);
  gpu_wait_s += std::chrono::duration<double>(use.waited()).count();
  return session->call(request, deadlines.judge());
}

CallResult EvalContext::candidate_call(const nlohmann::json& request) const {
  return candidate_call(request, deadlines.candidate());
}

CallResult EvalContext::candidate_call(const nlohmann::json& request, const runner::CallLimit& limit) const {
  const runner::GpuGate::SharedUse use(on_gpu && !timing_exclusive ? gate : nullptr);
  gpu_wait_s += std::chrono::duration<double>(use.waited()).count();
  return call_worker(*candidate, request, limit);
}

CallResult EvalContext::candidate_call_outside_gate(const nlohmann::json& request) const {
  return call_worker(*candidate, request, deadlines.start_up());
}

void EvalContext::fail_stage(StageName name, const std::string& summary, const CallResult& call) const {
  if (call.kind == "environment") {  // the worker says the machine failed it (a GPU full of others' memory)
    fail_evaluation("environment", summary);
    return;
  }
  auto& stage = verdict.stage(name);
  stage.status = StageStatus::failed;
  stage.summary = summary;
  stage.findings.push_back({check_for_call(call), rules::Severity::reject, summary, {0, 0}});
  const std::string log = candidate != nullptr ? trim_log(candidate->log_tail(), candidate_code_path) : "";
  stage.details["error"] = call.to_details(log);
  verdict.outcome = Outcome::rejected;
}

void EvalContext::reject_stage(StageName name, const std::string& summary,
                               std::vector<rules::Finding> findings) const {
  auto& stage = verdict.stage(name);
  stage.status = StageStatus::failed;
  stage.summary = summary;
  stage.findings.insert(stage.findings.end(), findings.begin(), findings.end());
  verdict.outcome = Outcome::rejected;
}

void EvalContext::fail_evaluation(const std::string& kind, const std::string& message) const {
  verdict.outcome = Outcome::error;
  verdict.error = EvaluationError{kind, message};
}

void EvalContext::fail_judge(const std::string& message, const CallResult& call) const {
  // The machine's state and kforge's own defects keep their kind: neither is the problem's to fix.
  const bool kept = call.kind == "environment" || call.kind == "internal";
  fail_evaluation(kept ? call.kind : "problem", message);
}

}  // namespace kforge::verify
