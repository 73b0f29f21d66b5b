#include "verify/runtime_stage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "verify/correctness_stage.hpp"
#include "verify/generalisation_trial.hpp"
#include "verify/input_attributes.hpp"
#include "verify/no_location.hpp"

namespace kforge::verify {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kProbeTrial = 2'000'000;  // trial id of the runtime probes, apart from the others

nlohmann::json check_request(const EvalContext& context, const CallResult& run) {
  const auto& settings = context.settings;
  return {{"op", "check_trial"},
          {"trial", kProbeTrial},
          {"outputs", run.body.value("outputs", nlohmann::json::array())},
          {"container", run.body.value("container", nlohmann::json(nullptr))},
          {"container_length", run.body.value("container_length", nlohmann::json(nullptr))},
          {"atol", settings.atol ? nlohmann::json(*settings.atol) : nlohmann::json(nullptr)},
          {"rtol", settings.rtol ? nlohmann::json(*settings.rtol) : nlohmann::json(nullptr)}};
}

// What one probe call produced: the candidate's reply and the judge's comparison.
struct ProbeResult {
  CallResult run;
  CallResult check;
};

ProbeResult probe(EvalContext& context, nlohmann::json request) {
  request["op"] = "run";
  ProbeResult result{context.candidate_call(request), {}};
  if (result.run.ok) {
    context.evidence.traces.push_back(result.run.body.value("trace", nlohmann::json::object()));
    result.check = context.judge_call(check_request(context, result.run));
  }
  return result;
}

// Indices of the computed outputs that the judge found correct: not plain values (no elements), not an
// input the wrapper returns as it got it (as the reference does).
std::vector<int> correct_outputs(const CallResult& check) {
  std::vector<int> correct;
  int index = 0;
  for (const auto& output : check.body.value("outputs", nlohmann::json::array())) {
    if (output.value("passed", false) && output.value("total_elements", 0L) > 0 &&
        !output.contains("aliases_input")) {
      correct.push_back(index);
    }
    ++index;
  }
  return correct;
}

class RuntimeProbes {
 public:
  explicit RuntimeProbes(EvalContext& context) : context_(context) {}

  // False when the evaluation itself failed (stage or evaluation already marked).
  bool run(std::vector<rules::Finding>& findings, nlohmann::json& details) {
    const auto inputs = context_.judge_call(
        {{"op", "start_trial"}, {"trial", kProbeTrial}, {"seed", context_.seeds.probe()}});
    if (!inputs.ok) {
      context_.fail_judge("the judge could not prepare the runtime probe: " + inputs.message, inputs);
      return false;
    }
    const bool ok = baseline(inputs.body["inputs"]) && refresh(context_.seeds.refresh(), findings, details) &&
                    ghost(findings, details) && trace_reference(details);
    context_.candidate_call({{"op", "release"}});
    context_.judge_call({{"op", "end_trial"}, {"trial", kProbeTrial}});
    return ok;
  }

 private:
  // A plain call on fresh buffers, so a cache keyed on them is primed before the refresh.
  bool baseline(const nlohmann::json& inputs) {
    const auto result = probe(context_, {{"inputs", inputs}});
    return accept_correct(result, "runtime probe on fresh inputs");
  }

  bool refresh(std::uint64_t seed, std::vector<rules::Finding>& findings, nlohmann::json& details) {
    const auto refreshed =
        context_.judge_call({{"op", "refresh_trial"}, {"trial", kProbeTrial}, {"seed", seed}});
    if (!refreshed.ok) {
      context_.fail_judge("the judge could not refresh the probe inputs: " + refreshed.message, refreshed);
      return false;
    }
    if (!refreshed.body.value("refreshed", false)) {
      details["input_refresh"] = "skipped: " + refreshed.body.value("reason", std::string("not possible"));
      return true;
    }
    const auto result = probe(context_, {{"reuse_inputs", true}});
    if (!result.run.ok) {
      return accept_correct(result, "rerun after the judge rewrote the inputs");
    }
    const bool passed = result.check.ok && result.check.body.value("passed", false);
    details["input_refresh"] = passed ? "passed" : "failed";
    if (!passed) {
      findings.push_back(
          {"input-refresh", rules::Severity::reject,
           "after the judge wrote new values into the same input buffers, the output did not follow "
           "them (" +
               first_failure(result.check.body) + "): outputs are cached across calls",
           kNoLocation});
    }
    return true;
  }

  bool ghost(std::vector<rules::Finding>& findings, nlohmann::json& details) {
    const auto result = probe(context_, {{"reuse_inputs", true}, {"ghost", true}});
    if (!result.run.ok) {  // the forward could not go on without its kernels: they matter
      details["ghost_replay"] = "passed: forward failed without its Triton kernels";
      return !result.run.process_lost || lost(result.run);
    }
    const auto correct = result.check.ok ? correct_outputs(result.check) : std::vector<int>{};
    details["ghost_replay"] = correct.empty() ? "passed: outputs wrong without the Triton kernels"
                                              : "failed: outputs still correct without the Triton kernels";
    if (!correct.empty()) {
      findings.push_back(
          {"ghost-replay", rules::Severity::reject,
           fmt::format("with every Triton kernel of the candidate turned into a no-op, output(s) {} "
                       "were still correct: the kernels are a decoy and the result is computed "
                       "elsewhere",
                       fmt::join(correct, ", ")),
           kNoLocation});
    }
    return true;
  }

  // When forward ran PyTorch work around its kernels, what the reference runs in one call on the same
  // inputs: a reference that is itself a Triton program allows as much (reference_parity.hpp).
  bool trace_reference(nlohmann::json& details) {
    if (!context_.evidence.ran_pytorch_work()) {
      return true;
    }
    const auto traced = context_.judge_call({{"op", "trace_reference"}, {"trial", kProbeTrial}});
    if (!traced.ok) {
      context_.fail_judge("the judge could not trace its reference: " + traced.message, traced);
      return false;
    }
    const auto& trace = traced.body.contains("trace") ? traced.body["trace"] : nlohmann::json::object();
    context_.evidence.reference = ReferenceParity::from_trace(trace);
    details["reference_parity"] =
        context_.evidence.reference
            ? nlohmann::json{{"aten_compute_ops", context_.evidence.reference->aten_ops},
                             {"aten_compute_elements", context_.evidence.reference->aten_elements},
                             {"gpu_kernels", context_.evidence.reference->gpu_kernels},
                             {"host_transfers", context_.evidence.reference->host_transfers},
                             {"formatted_tensors", context_.evidence.reference->formatted_tensors}}
            : nlohmann::json("none: the reference launches no Triton kernel");
    return true;
  }

  // A probe that failed where the trials passed is a verdict on the candidate.
  bool accept_correct(const ProbeResult& result, const std::string& what) {
    if (!result.run.ok) {
      context_.fail_stage(StageName::runtime, what + ": forward failed: " + result.run.message, result.run);
      return false;
    }
    if (!result.check.ok || !result.check.body.value("passed", false)) {
      context_.reject_stage(StageName::runtime, what + ": " + first_failure(result.check.body),
                            failure_findings(result.check.body, what + ": "));
      return false;
    }
    return true;
  }

  bool lost(const CallResult& run) {
    context_.fail_stage(StageName::runtime, "the candidate process died in the ghost replay: " + run.message,
                        run);
    return false;
  }

  EvalContext& context_;
};

}  // namespace

bool run_runtime_stage(EvalContext& context) {
  auto& stage = context.verdict.stage(StageName::runtime);
  const auto start = Clock::now();
  context.progress(StageName::runtime, "tracing forward, input refresh and ghost replay");
  std::vector<rules::Finding> findings;
  nlohmann::json details = nlohmann::json::object();
  const bool probed =
      RuntimeProbes(context).run(findings, details) && run_generalisation_trial(context, findings, details);
  auto trace_findings = runtime_findings(context.evidence);  // trials and probes
  const auto attribute_findings = input_attribute_findings(context.evidence.traces);
  trace_findings.insert(trace_findings.end(), attribute_findings.begin(), attribute_findings.end());
  findings.insert(findings.begin(), trace_findings.begin(), trace_findings.end());
  stage.duration_s = std::chrono::duration<double>(Clock::now() - start).count();
  details["time_coverage"] = context.evidence.time_coverage();
  details["own_launches_per_call"] = context.evidence.own_launches_per_call();
  details["trace"] =
      context.evidence.traces.empty() ? nlohmann::json(nullptr) : context.evidence.traces.back();
  stage.details.update(details);
  if (!probed) {
    stage.findings.insert(stage.findings.end(), findings.begin(), findings.end());
    return false;
  }
  const auto reject = std::find_if(findings.begin(), findings.end(), [](const auto& finding) {
    return finding.severity == rules::Severity::reject;
  });
  if (reject != findings.end()) {
    const std::string summary = fmt::format("[{}] {}", reject->rule_id, reject->message);
    context.reject_stage(StageName::runtime, summary, std::move(findings));
    return false;
  }
  stage.findings = std::move(findings);
  stage.status = StageStatus::passed;
  const auto coverage = details["time_coverage"];
  stage.summary = fmt::format(
      "own Triton kernels ran ({} launch(es) per call){}; input refresh {}; ghost replay {}",
      context.evidence.own_launches_per_call(),
      coverage.is_number() ? fmt::format(", {:.0f}% of GPU time in them", 100.0 * coverage.get<double>())
                           : std::string(),
      details.value("input_refresh", std::string("n/a")),
      details.value("ghost_replay", std::string("n/a")).substr(0, 6));
  if (const auto found = details.find("generalisation"); found != details.end() && found->is_object()) {
    stage.summary += "; generalisation " + found->value("status", std::string("n/a"));
  }
  if (!stage.findings.empty()) {
    stage.summary += fmt::format(" ({} warning(s))", stage.findings.size());
  }
  return true;
}

}  // namespace kforge::verify
