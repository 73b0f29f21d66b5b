#include "verify/problem_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "runner/environment_probe.hpp"
#include "runner/worker_launch.hpp"
#include "verify/input_seeds.hpp"

namespace kforge::verify {
namespace {

namespace fs = std::filesystem;

// The judge's start: Python and torch start-up, then the reference's inputs and outputs.
std::chrono::milliseconds load_timeout(const EvalSettings& settings) {
  return std::chrono::milliseconds(
      static_cast<long>(std::max(settings.timeout_s * 2.0, settings.compile_timeout_s()) * 1000.0));
}

}  // namespace

ProblemSession::ProblemSession(const EvalSettings& settings, const WhileLoading& while_loading)
    : problem_path_(fs::absolute(settings.problem_path)) {
  try {
    start(settings, while_loading);
  } catch (const std::exception& error) {
    load_error_ = EvaluationError{"environment", error.what()};
  }
}

ProblemSession::~ProblemSession() {
  if (judge_) {
    judge_->stop();
  }
}

std::string ProblemSession::key_of(const EvalSettings& settings) {
  std::error_code error;
  const auto path = fs::weakly_canonical(fs::absolute(settings.problem_path), error);
  return nlohmann::json{
      {"problem", path.string()},      {"device", settings.device},
      {"small", settings.small},       {"sizes", settings.sizes},
      {"seed", settings.seed},         {"python", settings.python ? settings.python->string() : ""},
      {"baseline", settings.baseline}, {"trusted", settings.problem_trusted}}
      .dump();
}

void ProblemSession::start(const EvalSettings& settings, const WhileLoading& while_loading) {
  python_ = runner::find_python_environment(settings.python);
  scratch_.emplace(runner::ScratchSpace::create());
  // "auto" on a machine without a GPU is the CPU too: the judge then needs the interpreter (a Triton
  // reference)
  const bool cpu_requested = runner::resolve_device(settings.device) == "cpu";
  judge_.emplace(runner::WorkerProcess::start(
      settings.problem_trusted
          ? runner::make_worker_launch(runner::WorkerRole::judge, *python_, scratch_->directory(),
                                       cpu_requested)
          : runner::make_sandboxed_judge_launch(*python_, scratch_->directory(), cpu_requested,
                                                problem_path_.parent_path(), scratch_->transfer_directory(),
                                                settings.timeout_s)));
  if (while_loading) {
    try {
      while_loading(*this);
    } catch (const std::exception&) {  // the caller does its work after the load instead
    }
  }
  load_request_ = {{"op", "load"},
                   {"device", settings.device},
                   {"problem_path", problem_path_.string()},
                   {"seed", settings.seed},
                   {"small", settings.small},
                   {"sizes", nlohmann::json(settings.sizes)},
                   {"perturbation_seed", InputSeeds(process_input_key(), settings.seed).perturbation()}};
  const auto load = call_worker(*judge_, load_request_, load_timeout(settings));
  if (load.ok) {
    load_reply_ = load.body;
    device_ = load.body["device"];
    on_gpu_ = device_.value("device", "cpu") != "cpu";
    return;
  }
  lost_ = true;
  if (load.process_lost) {  // the worker died before answering: usually a Python without torch
    load_error_ = EvaluationError{
        "environment",
        fmt::format(
            "the judge worker ({}) ended before answering: {}. Check that this Python can import torch "
            "(or pass --python / set KFORGE_PYTHON). Its log:\n{}",
            python_->interpreter.string(), load.message, trim_log(judge_->log_tail(), ""))};
    return;
  }
  const bool kept = load.kind == "environment" || load.kind == "usage" || load.kind == "internal";
  const std::string kind = kept ? load.kind : "problem";
  load_error_ = EvaluationError{kind, load.message};
}

pid_t ProblemSession::judge_pid() const {
  const std::lock_guard lock(mutex_);
  return judge_ ? judge_->pid() : -1;
}

CallResult ProblemSession::call(const nlohmann::json& request, std::chrono::milliseconds timeout) {
  const std::lock_guard lock(mutex_);
  if (lost_ || !judge_) {
    return {false,
            {},
            "judge_lost",
            "the judge of this problem is gone (it crashed or hung earlier: " + lost_reason_ + ")",
            true};
  }
  auto result = call_worker(*judge_, request, timeout);
  if (result.process_lost) {
    lost_ = true;
    result.message = fmt::format("the judge worker failed: {}. Its log:\n{}", result.message,
                                 trim_log(judge_->log_tail(), ""));
    result.kind = "judge_lost";
    lost_reason_ = fmt::format("during '{}': {}", request.value("op", "?"), result.message);
  }
  return result;
}

nlohmann::json ProblemSession::generalisation(std::chrono::milliseconds timeout) {
  const std::lock_guard once(generalisation_mutex_);
  if (generalisation_) {
    return *generalisation_;
  }
  auto request = load_request_;
  request["op"] = "load_generalisation";
  const auto reply = call(request, timeout);
  if (reply.ok) {
    generalisation_ = reply.body;
  } else if (!reply.process_lost) {  // the judge is fine: the instance just cannot be built
    generalisation_ = nlohmann::json{{"possible", false}, {"reason", reply.message}};
  } else {
    return {{"possible", false}, {"reason", reply.message}, {"judge_lost", true}};
  }
  return *generalisation_;
}

void ProblemSession::end_evaluation(const std::string& evaluation_id, std::chrono::milliseconds timeout) {
  call({{"op", "end_evaluation"}, {"evaluation", evaluation_id}}, timeout);
}

void ProblemSession::trim(std::chrono::milliseconds timeout) { call({{"op", "trim"}}, timeout); }

std::optional<double> ProblemSession::reference_call_s() const {
  const auto found = load_reply_.is_object() ? load_reply_.find("reference_call_s") : load_reply_.end();
  if (found == load_reply_.end() || !found->is_number()) {
    return std::nullopt;
  }
  return found->get<double>();
}

nlohmann::json ProblemSession::judge_sandbox() const {
  const std::lock_guard lock(mutex_);
  return judge_ ? judge_->sandbox_status() : nlohmann::json(nullptr);
}

bool ProblemSession::lost() const {
  const std::lock_guard lock(mutex_);
  return lost_;
}

std::optional<Baseline> ProblemSession::baseline() const {
  const std::lock_guard lock(mutex_);
  return baseline_;
}

void ProblemSession::set_baseline(Baseline baseline) {
  const std::lock_guard lock(mutex_);
  baseline_ = std::move(baseline);
  ++baseline_version_;
}

std::uint64_t ProblemSession::baseline_version() const {
  const std::lock_guard lock(mutex_);
  return baseline_version_;
}

}  // namespace kforge::verify
