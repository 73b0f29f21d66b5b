#include "verify/generalisation_trial.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "verify/correctness_stage.hpp"

namespace kforge::verify {
namespace {

constexpr int kGeneralisationTrial = 3'000'000;  // trial id of the generalisation trial in the judge
constexpr const char* kInstance = "generalisation";
constexpr const char* kCheck = "generalisation";

// What the instance changes, for messages: "ROWS=5, COLS=341; init input 0: 1.5 -> 2.0".
std::string describe_instance(const nlohmann::json& instance) {
  std::vector<std::string> parts;
  const nlohmann::json sizes = instance.value("sizes", nlohmann::json::object());
  for (const auto& [name, value] : sizes.items()) {
    parts.push_back(fmt::format("{}={}", name, value.dump()));
  }
  const nlohmann::json changes = instance.value("init_changes", nlohmann::json::array());
  for (const auto& change : changes) {
    parts.push_back(change.is_string() ? change.get<std::string>() : change.dump());
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

class GeneralisationTrial {
 public:
  GeneralisationTrial(EvalContext& context, std::vector<rules::Finding>& findings, nlohmann::json& details)
      : context_(context), findings_(findings), details_(details["generalisation"]) {}

  bool run() {
    if (!context_.settings.generalise) {
      details_ = {{"status", "skipped"}, {"reason", "--no-generalisation"}};
      return true;
    }
    const auto instance = context_.session->generalisation(context_.deadlines.judge() * 4);
    if (instance.value("judge_lost", false)) {
      context_.fail_evaluation("problem", "the judge failed while building the generalisation instance: " +
                                              instance.value("reason", std::string()));
      return false;
    }
    if (!instance.value("possible", false)) {
      details_ = {{"status", "not_possible"}, {"reason", instance.value("reason", std::string("unknown"))}};
      return true;
    }
    what_ = describe_instance(instance);
    details_ = {{"status", "running"},
                {"sizes", instance.value("sizes", nlohmann::json::object())},
                {"init_changes", instance.value("init_changes", nlohmann::json::array())}};
    const bool done = build() && trial();
    context_.judge_call({{"op", "end_trial"}, {"instance", kInstance}, {"trial", kGeneralisationTrial}});
    return done;
  }

 private:
  // ModelNew built from the instance's init inputs, with its perturbed parameters.
  bool build() {
    const auto init = context_.judge_call({{"op", "export_init"}, {"instance", kInstance}});
    if (!init.ok) {
      context_.fail_judge(
          "the judge could not share the generalisation instance's init inputs: " + init.message, init);
      return false;
    }
    const auto load = context_.candidate_call({{"op", "load"},
                                               {"instance", kInstance},
                                               {"device", context_.verdict.device["device"]},
                                               {"seed", context_.settings.seed},
                                               {"init_inputs", init.body["init_inputs"]},
                                               {"parameters", init.body["parameters"]}});
    if (!load.ok) {
      return failed("ModelNew could not be built with the instance's constructor arguments: " + load.message,
                    load);
    }
    const auto unmatched =
        load.body.value("perturbation", nlohmann::json::object()).value("unmatched", nlohmann::json::array());
    if (!unmatched.empty() && context_.parameters_perturbed) {
      return failed(fmt::format("ModelNew holds no tensor matching {} of Model's at these sizes",
                                fmt::join(unmatched, ", ")),
                    load);
    }
    return true;
  }

  bool trial() {
    const auto inputs = context_.judge_call({{"op", "start_trial"},
                                             {"instance", kInstance},
                                             {"trial", kGeneralisationTrial},
                                             {"seed", context_.seeds.generalisation(0)}});
    if (!inputs.ok) {
      context_.fail_judge("the judge could not prepare the generalisation trial: " + inputs.message, inputs);
      return false;
    }
    const auto run =
        context_.candidate_call({{"op", "run"}, {"instance", kInstance}, {"inputs", inputs.body["inputs"]}});
    if (!run.ok) {
      return failed("forward failed: " + run.message, run);
    }
    context_.evidence.traces.push_back(run.body.value("trace", nlohmann::json::object()));
    const auto& settings = context_.settings;
    const auto check = context_.judge_call(
        {{"op", "check_trial"},
         {"instance", kInstance},
         {"trial", kGeneralisationTrial},
         {"outputs", run.body.value("outputs", nlohmann::json::array())},
         {"container", run.body.value("container", nlohmann::json(nullptr))},
         {"container_length", run.body.value("container_length", nlohmann::json(nullptr))},
         {"atol", settings.atol ? nlohmann::json(*settings.atol) : nlohmann::json(nullptr)},
         {"rtol", settings.rtol ? nlohmann::json(*settings.rtol) : nlohmann::json(nullptr)}});
    context_.candidate_call({{"op", "release"}});
    if (!check.ok) {
      context_.fail_judge("the judge could not check the generalisation trial: " + check.message, check);
      return false;
    }
    details_["outputs"] = check.body.value("outputs", nlohmann::json::array());
    details_["failures"] = check.body.value("failures", nlohmann::json::array());
    if (!check.body.value("passed", false)) {
      return failed(first_failure(check.body), {});
    }
    details_["status"] = "passed";
    return true;
  }

  // A failure in the trial: a reject finding under strict, a warning under lenient. A candidate process
  // that is gone ends the evaluation here (the stage fails whatever the profile).
  bool failed(const std::string& why, const CallResult& call) {
    const std::string message = fmt::format(
        "at other sizes or constructor numbers ({}), {}: the kernel is specialised to the "
        "benchmark's instance (hard-coded shape, missing masks, or baked-in constants); a "
        "problem whose shapes are fixed says so with KFORGE_FIXED_SHAPES = True",
        what_, why);
    details_["status"] = "failed";
    details_["failure"] = why;
    if (!call.ok && !call.kind.empty()) {
      details_["error"] = call.to_details("");
    }
    const bool strict = context_.settings.profile == rules::Profile::strict;
    findings_.push_back({kCheck,
                         strict || call.process_lost ? rules::Severity::reject : rules::Severity::warn,
                         strict || call.process_lost ? message : message + " (lenient profile: a warning)",
                         {0, 0}});
    if (call.process_lost) {
      context_.reject_stage(StageName::runtime, "generalisation trial: " + why, {});
      return false;
    }
    return true;
  }

  EvalContext& context_;
  std::vector<rules::Finding>& findings_;
  nlohmann::json& details_;
  std::string what_;
};

}  // namespace

bool run_generalisation_trial(EvalContext& context, std::vector<rules::Finding>& findings,
                              nlohmann::json& details) {
  return GeneralisationTrial(context, findings, details).run();
}

}  // namespace kforge::verify
