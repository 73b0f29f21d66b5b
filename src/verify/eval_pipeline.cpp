#include "verify/eval_pipeline.hpp"

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <fstream>
#include <sstream>

#include "rules/static_analysis.hpp"
#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_launch.hpp"
#include "source/code_extraction.hpp"
#include "verify/correctness_stage.hpp"
#include "verify/eval_context.hpp"
#include "verify/performance_stage.hpp"
#include "verify/runtime_stage.hpp"

namespace kforge::verify {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
constexpr std::uintmax_t kMaxSourceBytes = std::uintmax_t{16} * 1024 * 1024;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Reads a user-named file; nullopt (with the verdict marked as a usage error) when it cannot.
std::optional<std::string> read_source(const fs::path& path, const char* role, Verdict& verdict) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    verdict.outcome = Outcome::error;
    verdict.error = EvaluationError{
        "usage", fmt::format("{} file {} does not exist or is not a regular file", role, path.string())};
    return std::nullopt;
  }
  if (fs::file_size(path, error) > kMaxSourceBytes) {
    verdict.outcome = Outcome::error;
    verdict.error =
        EvaluationError{"usage", fmt::format("{} file {} is larger than 16 MiB", role, path.string())};
    return std::nullopt;
  }
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream text;
  text << stream.rdbuf();
  if (!stream) {
    verdict.outcome = Outcome::error;
    verdict.error = EvaluationError{"usage", fmt::format("cannot read {} file {}", role, path.string())};
    return std::nullopt;
  }
  return text.str();
}

nlohmann::json settings_json(const EvalSettings& settings) {
  return {{"device", settings.device},
          {"trials", settings.trials},
          {"seed", settings.seed},
          {"atol", settings.atol ? nlohmann::json(*settings.atol) : nlohmann::json(nullptr)},
          {"rtol", settings.rtol ? nlohmann::json(*settings.rtol) : nlohmann::json(nullptr)},
          {"small", settings.small},
          {"sizes", nlohmann::json(settings.sizes)},
          {"timeout_s", settings.timeout_s},
          {"profile", settings.profile == rules::Profile::strict ? "strict" : "lenient"},
          {"noise_target", settings.timing.noise_target},
          {"time_budget_s", settings.timing.time_budget_s}};
}

// Stage 1: the code to evaluate, out of a plain file or an LLM response.
std::optional<std::string> run_extract_stage(const std::string& text, Verdict& verdict) {
  auto& stage = verdict.stage(StageName::extract);
  const auto start = Clock::now();
  const auto extracted = source::extract_code(text);
  stage.duration_s = seconds_since(start);
  if (!extracted.ok()) {
    stage.status = StageStatus::failed;
    stage.summary = extracted.error;
    verdict.outcome = Outcome::rejected;
    return std::nullopt;
  }
  const auto& code = *extracted.code;
  stage.status = StageStatus::passed;
  stage.summary = code.from_markdown
                      ? fmt::format("code block at line {} of an LLM response", code.line_offset)
                      : "plain Python source";
  stage.details = {{"from_markdown", code.from_markdown}, {"line_offset", code.line_offset}};
  verdict.candidate["extracted_from_markdown"] = code.from_markdown;
  verdict.candidate["code_line_offset"] = code.line_offset;
  return code.code;
}

// Stage 2: parse and static rules, in-process, before any Python runs. The problem's source lets
// the precision rule tell a float32 problem from a half-precision one.
bool run_static_stage(const std::string& code, const std::string& problem_source,
                      const EvalSettings& settings, Verdict& verdict) {
  auto& stage = verdict.stage(StageName::static_analysis);
  const auto start = Clock::now();
  const auto report = rules::analyse_candidate(code, settings.profile, problem_source);
  stage.duration_s = seconds_since(start);
  stage.findings = report.findings;
  stage.details = {{"kernels", report.kernels}, {"launched_kernels", report.launched_kernels}};
  if (report.syntax_error) {
    stage.status = StageStatus::failed;
    stage.summary = fmt::format("syntax error at {}: {}", source::to_string(report.syntax_error->location),
                                report.syntax_error->message);
    stage.details["syntax_error"] = {{"message", report.syntax_error->message},
                                     {"line", report.syntax_error->location.line},
                                     {"column", report.syntax_error->location.column}};
    verdict.outcome = Outcome::rejected;
    return false;
  }
  if (report.rejected()) {
    const auto& first =
        *std::find_if(report.findings.begin(), report.findings.end(),
                      [](const auto& finding) { return finding.severity == rules::Severity::reject; });
    stage.status = StageStatus::failed;
    stage.summary = fmt::format("[{}] {} (line {})", first.rule_id, first.message, first.location.line);
    verdict.outcome = Outcome::rejected;
    return false;
  }
  stage.status = StageStatus::passed;
  stage.summary = fmt::format("{} Triton kernel(s), launched from forward: {}", report.kernels.size(),
                              fmt::join(report.launched_kernels, ", "));
  return true;
}

// Starts the judge and loads the problem; the device it reports decides how the candidate runs.
std::optional<nlohmann::json> start_judge(EvalContext& context, runner::WorkerProcess& judge,
                                          const std::string& interpreter) {
  const auto& settings = context.settings;
  const auto load = call_worker(judge,
                                {{"op", "load"},
                                 {"device", settings.device},
                                 {"prefix", context.shm_prefix},
                                 {"problem_path", fs::absolute(settings.problem_path).string()},
                                 {"seed", settings.seed},
                                 {"small", settings.small},
                                 {"sizes", nlohmann::json(settings.sizes)}},
                                context.call_timeout() * 2);
  if (!load.ok) {
    if (load.process_lost) {  // the worker died before answering: usually a Python without torch
      context.fail_evaluation(
          "environment",
          fmt::format(
              "the judge worker ({}) ended before answering: {}. Check that this Python can import torch "
              "(or pass --python / set KFORGE_PYTHON). Its log:\n{}",
              interpreter, load.message, trim_log(judge.log_tail(), "")));
      return std::nullopt;
    }
    const std::string kind = load.kind == "environment" || load.kind == "usage" ? load.kind : "problem";
    context.fail_evaluation(kind, load.message);
    return std::nullopt;
  }
  context.verdict.device = load.body["device"];
  context.verdict.problem["sizes"] = load.body["sizes"];
  context.on_gpu = context.verdict.device.value("device", "cpu") != "cpu";
  return load.body;
}

// Stage 3: import the candidate and build ModelNew with the judge's seed and init inputs.
bool run_compile_stage(EvalContext& context, const nlohmann::json& judge_load) {
  auto& stage = context.verdict.stage(StageName::compile);
  const auto start = Clock::now();
  const auto load = call_worker(*context.candidate,
                                {{"op", "load"},
                                 {"device", context.verdict.device["device"]},
                                 {"prefix", context.shm_prefix},
                                 {"candidate_path", context.candidate_code_path},
                                 {"seed", context.settings.seed},
                                 {"init_inputs", judge_load["init_inputs"]},
                                 {"forward_arity", judge_load["input_count"]}},
                                context.call_timeout());
  stage.duration_s = seconds_since(start);
  if (!load.ok) {
    if (load.kind == "environment" || load.kind == "internal") {
      context.fail_evaluation("environment", "the candidate worker could not start: " + load.message);
      return false;
    }
    context.fail_stage(StageName::compile, load.kind + ": " + load.message, load);
    return false;
  }
  stage.status = StageStatus::passed;
  stage.summary = fmt::format("ModelNew built ({:.1f} s)", stage.duration_s);
  return true;
}

void mark_remaining_not_run(Verdict& verdict) {
  for (auto& stage : verdict.stages) {
    if (stage.status == StageStatus::not_run && stage.summary.empty()) {
      stage.summary = "not run: an earlier stage did not pass";
    }
  }
}

void run_worker_stages(const EvalSettings& settings, Verdict& verdict, const std::string& code) {
  const auto python = runner::find_python_environment(settings.python);
  const auto scratch = runner::ScratchSpace::create();
  const fs::path code_path = scratch.directory() / "code" / "candidate.py";
  fs::create_directories(code_path.parent_path());
  std::ofstream(code_path, std::ios::binary) << code;

  const bool cpu_requested = settings.device == "cpu";
  auto judge = runner::WorkerProcess::start(
      runner::make_worker_launch(runner::WorkerRole::judge, python, scratch.directory(), cpu_requested));
  EvalContext context{settings, verdict, &judge, nullptr, code_path.string(), scratch.shm_prefix(),
                      false,    {}};
  const auto judge_load = start_judge(context, judge, python.interpreter.string());
  if (!judge_load) {
    return;
  }
  auto candidate = runner::WorkerProcess::start(
      runner::make_candidate_launch(python, scratch.directory(), !context.on_gpu,
                                    {{judge.pid()}, settings.timeout_s, {settings.problem_path}}));
  verdict.candidate["sandbox"] = candidate.sandbox_status();
  context.candidate = &candidate;
  context.evidence.on_gpu = context.on_gpu;
  if (!run_compile_stage(context, *judge_load) || !run_correctness_stage(context) ||
      !run_runtime_stage(context)) {
    return;
  }
  run_performance_stage(context);
  if (!verdict.error && !verdict.failed_stage()) {
    verdict.outcome = Outcome::accepted;
  }
}

}  // namespace

Verdict evaluate(const EvalSettings& settings) {
  const auto start = Clock::now();
  Verdict verdict = Verdict::with_all_stages_pending();
  verdict.settings = settings_json(settings);
  verdict.problem = {{"path", settings.problem_path.string()}};
  verdict.candidate = {{"path", settings.candidate_path.string()}};
  try {
    const auto problem_text = read_source(settings.problem_path, "problem", verdict);
    const auto candidate_text =
        problem_text ? read_source(settings.candidate_path, "candidate", verdict) : std::nullopt;
    if (candidate_text) {
      const auto code = run_extract_stage(*candidate_text, verdict);
      if (code && run_static_stage(*code, *problem_text, settings, verdict)) {
        run_worker_stages(settings, verdict, *code);
      }
    }
  } catch (const std::exception& exc) {
    verdict.outcome = Outcome::error;
    verdict.error = EvaluationError{"environment", exc.what()};
  }
  mark_remaining_not_run(verdict);
  verdict.duration_s = seconds_since(start);
  return verdict;
}

}  // namespace kforge::verify
