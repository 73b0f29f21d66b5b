#include "verify/correctness_stage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "measure/elapsed.hpp"

namespace kforge::verify {
namespace {

using Clock = std::chrono::steady_clock;

using measure::seconds_since;

std::string call_failure_summary(int trial, const CallResult& call) {
  if (call.kind == "timeout") {
    return fmt::format("trial {}: {} (forward hung or ran too long; the limits: docs/verdict.md)", trial,
                       call.message);
  }
  if (call.kind == "crashed") {
    return fmt::format("trial {}: the candidate process crashed: {}", trial, call.message);
  }
  if (call.kind == "memory_limit" || call.kind == "gpu_memory_limit") {
    return fmt::format("trial {}: {}", trial, call.message);
  }
  if (call.kind == "exited") {
    return fmt::format("trial {}: the candidate process ended during forward: {}", trial, call.message);
  }
  if (call.kind == "reply-forged") {
    return fmt::format("trial {}: forged worker reply: {}", trial, call.message);
  }
  if (call.kind == "device_fault") {
    return fmt::format("trial {}: GPU fault in the candidate: {}", trial, call.message);
  }
  return fmt::format("trial {}: forward failed: {}", trial, call.message);
}

}  // namespace

std::string first_failure(const nlohmann::json& check) {
  const auto failures = check.value("failures", nlohmann::json::array());
  return failures.empty() || !failures.front().is_string() ? "outputs differ"
                                                           : failures.front().get<std::string>();
}

std::vector<rules::Finding> failure_findings(const nlohmann::json& check, const std::string& prefix) {
  const auto failures = check.value("failures", nlohmann::json::array());
  const auto checks = check.value("checks", nlohmann::json::array());
  std::vector<rules::Finding> findings;
  for (std::size_t i = 0; i < failures.size(); ++i) {
    const std::string id =
        i < checks.size() && checks[i].is_string() ? checks[i].get<std::string>() : "output-mismatch";
    const std::string message = failures[i].is_string() ? failures[i].get<std::string>() : "outputs differ";
    findings.push_back({id, rules::Severity::reject, prefix + message, {0, 0}});
  }
  if (findings.empty()) {
    findings.push_back({"output-mismatch", rules::Severity::reject, prefix + "outputs differ", {0, 0}});
  }
  return findings;
}

namespace {

struct ErrorTotals {
  double worst_rel_l2 = 0.0;
  double worst_abs = 0.0;
  std::int64_t undefined = 0;  // most output elements of one trial the reference left unwritten
};

void accumulate(ErrorTotals& totals, const nlohmann::json& check) {
  std::int64_t undefined = 0;
  for (const auto& output : check.value("outputs", nlohmann::json::array())) {
    totals.worst_rel_l2 = std::max(totals.worst_rel_l2, output.value("rel_l2_error", 0.0));
    totals.worst_abs = std::max(totals.worst_abs, output.value("max_abs_error", 0.0));
    undefined += output.value("undefined_elements", std::int64_t{0});
  }
  totals.undefined = std::max(totals.undefined, undefined);
}

// Said in the summary: elements the reference never writes are not compared (the judge's mask).
std::string undefined_note(const ErrorTotals& totals) {
  return totals.undefined > 0
             ? fmt::format("; {} output element(s) the reference leaves unwritten not compared",
                           totals.undefined)
             : std::string();
}

nlohmann::json tolerance_request(const EvalSettings& settings) {
  return {{"atol", settings.atol ? nlohmann::json(*settings.atol) : nlohmann::json(nullptr)},
          {"rtol", settings.rtol ? nlohmann::json(*settings.rtol) : nlohmann::json(nullptr)}};
}

// One trial; returns false (with the stage or the evaluation marked) when it did not pass.
bool run_trial(EvalContext& context, int trial, nlohmann::json& trial_log, ErrorTotals& totals) {
  const auto start = Clock::now();
  // The verdict names the trial by its public label; the inputs come from a seed only kforge knows.
  const auto seed = context.settings.seed + 1 + static_cast<std::uint64_t>(trial);
  auto& stage = context.verdict.stage(StageName::correctness);
  const auto inputs =
      context.judge_call({{"op", "start_trial"}, {"trial", trial}, {"seed", context.seeds.trial(trial)}});
  if (!inputs.ok) {
    context.fail_judge(fmt::format("the judge could not prepare trial {}: {}", trial, inputs.message),
                       inputs);
    return false;
  }
  if (trial == 0) {
    context.evidence.problem_float_dtypes =
        inputs.body.value("input_dtypes", nlohmann::json::array()).get<std::vector<std::string>>();
  }
  // The first forward compiles the candidate's kernels: its limit moves on while they compile.
  const auto run =
      context.candidate_call({{"op", "run"}, {"inputs", inputs.body["inputs"]}},
                             trial == 0 ? context.deadlines.first_calls() : context.deadlines.candidate());
  if (!run.ok) {
    if (run.kind == "compile_error") {
      context.fail_stage(StageName::compile, "Triton compilation failed at the first forward: " + run.message,
                         run);
      stage.status = StageStatus::not_run;
      return false;
    }
    context.fail_stage(StageName::correctness, call_failure_summary(trial, run), run);
    return false;
  }
  auto check_request = tolerance_request(context.settings);
  check_request.update({{"op", "check_trial"},
                        {"trial", trial},
                        {"outputs", run.body.value("outputs", nlohmann::json::array())},
                        {"container", run.body.value("container", nlohmann::json(nullptr))},
                        {"container_length", run.body.value("container_length", nlohmann::json(nullptr))}});
  context.evidence.traces.push_back(run.body.value("trace", nlohmann::json::object()));
  const auto check = context.judge_call(check_request);
  context.candidate_call({{"op", "release"}});
  context.judge_call({{"op", "end_trial"}, {"trial", trial}});
  if (!check.ok) {
    if (check.kind == "bad_output") {
      context.fail_stage(StageName::correctness, fmt::format("trial {}: {}", trial, check.message), check);
      return false;
    }
    context.fail_judge(fmt::format("the judge could not check trial {}: {}", trial, check.message), check);
    return false;
  }
  const bool passed = check.body.value("passed", false);
  trial_log.push_back({{"trial", trial},
                       {"seed", seed},
                       {"passed", passed},
                       {"duration_s", seconds_since(start)},
                       {"failures", check.body.value("failures", nlohmann::json::array())},
                       {"mutated_inputs", check.body.value("mutated_inputs", nlohmann::json::array())},
                       {"outputs", check.body.value("outputs", nlohmann::json::array())}});
  accumulate(totals, check.body);
  if (!passed) {
    context.reject_stage(StageName::correctness,
                         fmt::format("trial {} (seed {}): {}", trial, seed, first_failure(check.body)),
                         failure_findings(check.body, fmt::format("trial {}: ", trial)));
  }
  return passed;
}

}  // namespace

bool run_correctness_stage(EvalContext& context) {
  auto& stage = context.verdict.stage(StageName::correctness);
  const auto start = Clock::now();
  nlohmann::json trial_log = nlohmann::json::array();
  ErrorTotals totals;
  bool all_passed = true;
  for (int trial = 0; trial < context.settings.trials && all_passed; ++trial) {
    context.progress(StageName::correctness, fmt::format("trial {}/{}", trial + 1, context.settings.trials));
    all_passed = run_trial(context, trial, trial_log, totals);
  }
  stage.details["trials"] = std::move(trial_log);
  stage.duration_s = seconds_since(start);
  stage.details["worst_rel_l2_error"] = totals.worst_rel_l2;
  stage.details["worst_max_abs_error"] = totals.worst_abs;
  stage.details["undefined_elements"] = totals.undefined;
  if (all_passed) {
    stage.status = StageStatus::passed;
    stage.summary = fmt::format("{}/{} trials passed; worst rel-L2 error {:.2e}, max abs error {:.2e}{}",
                                context.settings.trials, context.settings.trials, totals.worst_rel_l2,
                                totals.worst_abs, undefined_note(totals));
  }
  return all_passed;
}

}  // namespace kforge::verify
