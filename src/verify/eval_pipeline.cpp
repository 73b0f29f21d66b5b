#include "verify/eval_pipeline.hpp"

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "measure/elapsed.hpp"
#include "rules/static_analysis.hpp"
#include "runner/environment_probe.hpp"
#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_launch.hpp"
#include "source/code_extraction.hpp"
#include "source/text_file.hpp"
#include "verify/call_deadlines.hpp"
#include "verify/correctness_stage.hpp"
#include "verify/entry_point_names.hpp"
#include "verify/eval_context.hpp"
#include "verify/gpu_memory_share.hpp"
#include "verify/performance_stage.hpp"
#include "verify/runtime_stage.hpp"

namespace kforge::verify {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
constexpr std::uintmax_t kMaxProblemBytes = std::uintmax_t{16} * 1024 * 1024;

using measure::seconds_since;

// Reads a user-named file; nullopt (with the verdict marked as a usage error) when it cannot.
std::optional<std::string> read_source(const fs::path& path, const char* role, Verdict& verdict) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    verdict.outcome = Outcome::error;
    verdict.error = EvaluationError{
        "usage", fmt::format("{} file {} does not exist or is not a regular file", role, path.string())};
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

// A candidate too large to be code is the candidate's fault: a rejection at the extract stage (with
// its own check id), never a usage error, so batches and rewards count it as a wrong answer.
void reject_oversized_candidate(std::uintmax_t size, std::uintmax_t limit, Verdict& verdict) {
  auto& stage = verdict.stage(StageName::extract);
  stage.status = StageStatus::failed;
  stage.summary =
      fmt::format("the candidate is {} bytes, more than the {} bytes a candidate may have", size, limit);
  stage.findings.push_back({"candidate-too-large", rules::Severity::reject, stage.summary, {0, 0}});
  verdict.outcome = Outcome::rejected;
}

// The candidate's text: given inline (a batch line's completion) or read from its file; nullopt when
// the verdict is already decided (an oversized candidate is rejected, an unreadable file an error).
std::optional<std::string> read_candidate(const EvalSettings& settings, Verdict& verdict) {
  const auto limit = settings.max_candidate_bytes;
  if (settings.candidate_text) {
    if (settings.candidate_text->size() > limit) {
      reject_oversized_candidate(settings.candidate_text->size(), limit, verdict);
      return std::nullopt;
    }
    return *settings.candidate_text;
  }
  std::error_code error;
  const auto size = fs::is_regular_file(settings.candidate_path, error)
                        ? fs::file_size(settings.candidate_path, error)
                        : std::uintmax_t{0};
  if (!error && size > limit) {
    reject_oversized_candidate(size, limit, verdict);
    return std::nullopt;
  }
  return read_source(settings.candidate_path, "candidate", verdict);
}

// The problem's source; a problem file over the size limit is a usage error (the user's input).
std::optional<std::string> read_problem(const EvalSettings& settings, Verdict& verdict) {
  std::error_code error;
  if (fs::is_regular_file(settings.problem_path, error) &&
      fs::file_size(settings.problem_path, error) > kMaxProblemBytes) {
    verdict.outcome = Outcome::error;
    verdict.error = EvaluationError{
        "usage", fmt::format("problem file {} is larger than 16 MiB", settings.problem_path.string())};
    return std::nullopt;
  }
  return read_source(settings.problem_path, "problem", verdict);
}

nlohmann::json settings_json(const EvalSettings& settings) {
  return {{"device", settings.device},
          {"trials", settings.trials},
          {"seed", settings.seed},
          {"input_key", process_input_key().describe()},
          {"atol", settings.atol ? nlohmann::json(*settings.atol) : nlohmann::json(nullptr)},
          {"rtol", settings.rtol ? nlohmann::json(*settings.rtol) : nlohmann::json(nullptr)},
          {"small", settings.small},
          {"sizes", nlohmann::json(settings.sizes)},
          {"timeout_s", settings.timeout_s},
          {"compile_timeout_s", settings.compile_timeout_s()},
          {"profile", settings.profile == rules::Profile::strict ? "strict" : "lenient"},
          {"generalise", settings.generalise},
          {"reference_beside", settings.reference_beside},
          {"noise_target", settings.timing.noise_target},
          {"time_budget_s", settings.timing.time_budget_s}};
}

// Stage 1: the code to evaluate, out of a plain file or an LLM response.
std::optional<source::ExtractedCode> run_extract_stage(const std::string& text, Verdict& verdict) {
  auto& stage = verdict.stage(StageName::extract);
  const auto start = Clock::now();
  auto extracted = source::extract_code(text);
  stage.duration_s = seconds_since(start);
  if (!extracted.ok()) {
    stage.status = StageStatus::failed;
    stage.summary = extracted.error;
    stage.findings.push_back({"no-candidate-code", rules::Severity::reject, extracted.error, {0, 0}});
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
  return std::move(extracted.code);
}

// Stage 2: parse and static rules, in-process, before any Python runs. The problem's source lets
// the precision rule tell a float32 problem from a half-precision one.
bool run_static_stage(const source::ExtractedCode& code, const std::string& problem_source,
                      const EvalSettings& settings, Verdict& verdict) {
  auto& stage = verdict.stage(StageName::static_analysis);
  const auto start = Clock::now();
  const auto report =
      code.parsed != nullptr
          ? rules::analyse_candidate(*code.parsed, code.code, settings.profile, problem_source)
          : rules::analyse_candidate(code.code, settings.profile, problem_source);
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

// The GPU memory the candidate may hold, from the problem's footprint on the device (the judge's load).
std::uint64_t gpu_memory_limit(const ProblemSession& session, bool reference_beside) {
  const auto& load = session.load_reply();
  const auto memory = load.value("gpu_memory", nlohmann::json::object());
  const std::uint64_t total = memory.is_object() ? memory.value("total", std::uint64_t{0}) : 0;
  return candidate_gpu_memory_limit(ProblemFootprint::from_load_reply(load), total, reference_beside);
}

// After ModelNew is built: the candidate worker found (or not) the reference's perturbed parameters in
// it. Unfound ones reject under strict (`parameter-perturbation`); under lenient both sides keep their
// default values and the verdict warns.
bool accept_parameter_perturbation(EvalContext& context, const nlohmann::json& report) {
  auto& stage = context.verdict.stage(StageName::compile);
  stage.details["parameter_perturbation"] = report;
  const auto unmatched = report.value("unmatched", nlohmann::json::array());
  if (unmatched.empty()) {
    return true;
  }
  const std::string message = fmt::format(
      "kforge perturbs the model's parameters before the trials (the same values on both sides), but "
      "ModelNew holds no tensor matching {} of Model's by name or by its initial values: keep each "
      "parameter as a parameter or buffer (any name) and derive other layouts in forward",
      fmt::join(unmatched, ", "));
  if (context.settings.profile == rules::Profile::strict) {
    context.reject_stage(StageName::compile, "[parameter-perturbation] " + message,
                         {{"parameter-perturbation", rules::Severity::reject, message, {0, 0}}});
    return false;
  }
  stage.findings.push_back({"parameter-perturbation",
                            rules::Severity::warn,
                            message + "; lenient profile: the trials use the default parameters",
                            {0, 0}});
  context.parameters_perturbed = false;
  return true;
}

// What the candidate worker needs to build the problem's Model as the judge did, so the reference can be
// timed beside the candidate (docs/verdict.md, "Performance"): a copy of the problem file in the
// candidate's own folder, the judge's size constants and seed. Only where the user asked for it
// (--reference-beside) and a timing will compare eager PyTorch on a GPU.
std::optional<nlohmann::json> reference_beside_request(const EvalContext& context) {
  const auto& settings = context.settings;
  if (!context.on_gpu || !settings.measure_performance || settings.baseline != "eager" ||
      !settings.reference_beside) {
    return std::nullopt;
  }
  const auto copy = fs::path(context.candidate_code_path).parent_path() / "reference.py";
  try {
    std::ofstream(copy, std::ios::binary) << source::read_text_file(context.session->problem_path());
  } catch (const std::exception&) {
    return std::nullopt;  // the judge read it at load; without a copy the timing compares two processes
  }
  return nlohmann::json{{"path", copy.string()},
                        {"sizes", context.session->load_reply().value("sizes", nlohmann::json::object())},
                        {"seed", settings.seed}};
}

// Stage 3: import the candidate and build ModelNew with the judge's seed and init inputs, then set the
// reference's perturbed parameters in it. Its calls get the compile allowance: the first one waits for
// the worker to start (Python, torch).
bool run_compile_stage(EvalContext& context, const nlohmann::json& init) {
  auto& stage = context.verdict.stage(StageName::compile);
  const auto start = Clock::now();
  // Device set-up (the CUDA context) runs no candidate code, so other evaluations' timing need not wait
  nlohmann::json prepare_request = {{"op", "prepare"}, {"device", context.verdict.device["device"]}};
  if (context.on_gpu) {  // the candidate's share of GPU memory, capped before its code is imported
    const auto limit = gpu_memory_limit(*context.session, context.settings.reference_beside);
    prepare_request["gpu_memory_limit"] = limit;
    stage.details["gpu_memory_limit_bytes"] = limit;
  }
  const auto prepare = context.candidate_call_outside_gate(prepare_request);
  stage.details["device_setup_s"] = seconds_since(start);
  context.progress(StageName::compile, "importing the candidate and building ModelNew");
  nlohmann::json load_request = {{"op", "load"},
                                 {"device", context.verdict.device["device"]},
                                 {"transfer_dir", context.transfer_dir},
                                 {"candidate_path", context.candidate_code_path},
                                 {"seed", context.settings.seed},
                                 {"init_inputs", init["init_inputs"]},
                                 {"parameters", init.value("parameters", nlohmann::json::object())},
                                 {"forward_arity", context.session->load_reply()["input_count"]}};
  if (const auto reference = reference_beside_request(context)) {
    load_request["reference"] = *reference;
  }
  const auto load =
      !prepare.ok ? prepare : context.candidate_call(load_request, context.deadlines.construction());
  stage.duration_s = seconds_since(start);
  if (!load.ok) {
    if (load.kind == "environment" || load.kind == "internal") {
      context.fail_evaluation("environment", "the candidate worker could not start: " + load.message);
      return false;
    }
    context.fail_stage(StageName::compile, load.kind + ": " + load.message, load);
    return false;
  }
  if (!accept_parameter_perturbation(context, load.body.value("perturbation", nlohmann::json::object()))) {
    return false;
  }
  if (const auto beside = load.body.find("beside_reference");
      beside != load.body.end() && beside->is_object()) {
    context.reference_beside = beside->value("built", false);
    stage.details["reference_beside"] = *beside;
  }
  stage.status = StageStatus::passed;
  const auto perturbed = stage.details["parameter_perturbation"].value("perturbed", 0);
  stage.summary =
      fmt::format("ModelNew built ({:.1f} s){}", stage.duration_s,
                  perturbed > 0 ? fmt::format("; {} parameter tensor(s) perturbed", perturbed) : "");
  return true;
}

void mark_remaining_not_run(Verdict& verdict) {
  for (auto& stage : verdict.stages) {
    if (stage.status == StageStatus::not_run && stage.summary.empty()) {
      stage.summary = "not run: an earlier stage did not pass";
    }
  }
}

// Frees the judge's buffers of one evaluation however the evaluation ends.
class EvaluationInSession {
 public:
  EvaluationInSession(ProblemSession& session, const EvalSettings& settings)
      : session_(session), id_(session.new_evaluation_id()), timeout_(settings.timeout_s) {}
  EvaluationInSession(const EvaluationInSession&) = delete;
  EvaluationInSession& operator=(const EvaluationInSession&) = delete;
  EvaluationInSession(EvaluationInSession&&) = delete;
  EvaluationInSession& operator=(EvaluationInSession&&) = delete;
  ~EvaluationInSession() {
    session_.end_evaluation(id_, std::chrono::milliseconds(static_cast<long>(timeout_ * 1000.0)));
  }
  const std::string& id() const { return id_; }

 private:
  ProblemSession& session_;
  std::string id_;
  double timeout_;
};

// A scratch space in the zygote's folders when there is a zygote (its sandbox opens only those), the
// transfer folder in the session's (the only one a sandboxed judge may write).
runner::ScratchSpace new_scratch(runner::CandidateZygote* zygote, const ProblemSession& session) {
  return zygote != nullptr ? zygote->new_scratch(session.transfer_root())
                           : runner::ScratchSpace::create_with_transfer_under(session.transfer_root());
}

// Forked by the zygote when there is one; started fresh without one or once the zygote is lost.
runner::WorkerProcess start_candidate(runner::CandidateZygote* zygote, const ProblemSession& session,
                                      const runner::ScratchSpace& scratch,
                                      const runner::CandidateSandboxContext& context, bool on_gpu,
                                      const std::string& code) {
  if (zygote != nullptr) {
    zygote->preload_for(code);
  }
  if (zygote != nullptr && !zygote->lost()) {
    try {
      return zygote->fork_candidate(scratch, context);
    } catch (const std::runtime_error&) {
      if (!zygote->lost()) {
        throw;  // a sandbox layer failed: a fresh start would fail the same way
      }
    }
  }
  return runner::WorkerProcess::start(
      runner::make_candidate_launch(session.python(), scratch.directory(), !on_gpu, context));
}

// Writes the candidate's code where its worker imports it from; its path.
fs::path write_candidate_code(const runner::ScratchSpace& scratch, const std::string& code) {
  fs::path code_path = scratch.directory() / runner::kCandidateCodeFolder / "candidate.py";
  fs::create_directories(code_path.parent_path());
  std::ofstream(code_path, std::ios::binary) << code;
  return code_path;
}

// What the candidate must never read: the problem (the reference) and the input key.
std::vector<fs::path> secret_paths(const EvalSettings& settings) {
  std::vector<fs::path> paths{settings.problem_path};
  if (const auto& key = process_input_key(); key.file) {
    paths.push_back(*key.file);
  }
  return paths;
}

runner::CandidateSandboxContext candidate_context(const EvalSettings& settings, const ProblemSession& session,
                                                  const runner::ScratchSpace& scratch) {
  return {{session.judge_pid()}, settings.timeout_s, secret_paths(settings), scratch.transfer_directory()};
}

// A single evaluation's candidate worker, started while the judge loads the problem: its Python and
// torch start-up (about 2 s) overlaps the judge's instead of following it.
struct PrestartedCandidate {
  // Started for the device the judge will settle on, as the judge resolves it; run_worker_stages starts
  // another worker in the rare case the judge's load ends elsewhere.
  PrestartedCandidate(const EvalSettings& settings, const ProblemSession& session, const std::string& code)
      : scratch(new_scratch(nullptr, session)),
        code_path(write_candidate_code(scratch, code)),
        on_gpu(runner::resolve_device(settings.device) != "cpu"),
        worker(start_candidate(nullptr, session, scratch, candidate_context(settings, session, scratch),
                               on_gpu, code)) {}

  runner::ScratchSpace scratch;
  fs::path code_path;
  bool on_gpu;
  runner::WorkerProcess worker;  // after the scratch: stopped before its folder goes
};

// Tells the observer, if any, that a stage has its result (in the words the final verdict will use).
void report_stage(EvalObserver* observer, const StageResult& stage, const EvalSettings& settings) {
  if (observer == nullptr || stage.status == StageStatus::not_run) {
    return;
  }
  if (!settings.entry_point) {
    observer->stage_finished(stage);
    return;
  }
  auto named = stage;
  name_entry_point(named, *settings.entry_point);
  observer->stage_finished(named);
}

// Runs one stage, notes in it how long its calls waited for the GPU (other evaluations' timing) and
// reports it to the observer.
bool counting_gpu_wait(EvalContext& context, StageName name, const std::function<bool()>& stage) {
  const double before = context.gpu_wait_s;
  const bool passed = stage();
  if (context.gate != nullptr && context.on_gpu) {
    context.verdict.stage(name).details["gpu_wait_s"] = context.gpu_wait_s - before;
  }
  report_stage(context.observer, context.verdict.stage(name), context.settings);
  return passed;
}

void run_worker_stages(const EvalSettings& settings, Verdict& verdict, const std::string& code,
                       ProblemSession& session, runner::GpuGate* gate, runner::CandidateZygote* zygote,
                       EvalObserver* observer, std::optional<PrestartedCandidate> prestarted) {
  if (session.load_error()) {
    verdict.outcome = Outcome::error;
    verdict.error = *session.load_error();
    return;
  }
  verdict.device = session.device();
  if (observer != nullptr) {
    observer->device_ready(verdict.device);
  }
  verdict.problem["sizes"] = session.load_reply()["sizes"];
  if (const auto judge_sandbox = session.judge_sandbox(); !judge_sandbox.is_null()) {
    verdict.problem["judge_sandbox"] = judge_sandbox;
  }
  if (prestarted && prestarted->on_gpu != session.on_gpu()) {
    prestarted.reset();  // started for another device than the judge's: a new one below
  }
  const auto scratch = prestarted ? std::move(prestarted->scratch) : new_scratch(zygote, session);
  const fs::path code_path = prestarted ? prestarted->code_path : write_candidate_code(scratch, code);
  CallDeadlines deadlines(settings.timeout_s, session.reference_call_s(), session.on_gpu(),
                          settings.derived_call_limits, runner::candidate_compile_cache(scratch.directory()));
  verdict.settings["call_limits"] = deadlines.to_json();

  const EvaluationInSession evaluation(session, settings);
  EvalContext context{settings,
                      verdict,
                      &session,
                      nullptr,
                      code_path.string(),
                      scratch.transfer_directory().string(),
                      evaluation.id(),
                      gate,
                      false,
                      session.on_gpu(),
                      0.0,
                      {},
                      std::move(deadlines),
                      observer};
  context.evidence.on_gpu = context.on_gpu;
  const auto init = context.judge_call({{"op", "export_init"}});
  if (!init.ok) {
    context.fail_judge("the judge could not share the init inputs: " + init.message, init);
    return;
  }
  context.progress(StageName::compile, "starting the candidate's worker");
  auto candidate = prestarted
                       ? std::move(prestarted->worker)
                       : start_candidate(zygote, session, scratch,
                                         candidate_context(settings, session, scratch), context.on_gpu, code);
  verdict.candidate["sandbox"] = candidate.sandbox_status();
  verdict.stage(StageName::compile).details["candidate_worker"] =
      prestarted                             ? "started while the judge loaded the problem"
      : zygote != nullptr && !zygote->lost() ? "forked from the warm zygote"
                                             : "started after the judge loaded the problem";
  context.candidate = &candidate;
  const bool reached_timing =
      counting_gpu_wait(context, StageName::compile, [&] { return run_compile_stage(context, init.body); }) &&
      counting_gpu_wait(context, StageName::correctness, [&] { return run_correctness_stage(context); }) &&
      counting_gpu_wait(context, StageName::runtime, [&] { return run_runtime_stage(context); });
  if (!reached_timing) {
    return;
  }
  counting_gpu_wait(context, StageName::performance, [&] {
    run_performance_stage(context);
    return true;
  });
  if (!verdict.error && !verdict.failed_stage()) {
    verdict.outcome = Outcome::accepted;
  }
}

Verdict new_verdict(const EvalSettings& settings) {
  Verdict verdict = Verdict::with_all_stages_pending();
  verdict.settings = settings_json(settings);
  verdict.problem = {{"path", settings.problem_path.string()}};
  verdict.candidate = {{"path", settings.candidate_path.string()}};
  return verdict;
}

// Reads the two files and runs extract and static, which need no Python: the code when the candidate
// goes on to the worker stages, nullopt when the verdict is already decided.
std::optional<std::string> screened_code(const EvalSettings& settings, Verdict& verdict,
                                         EvalObserver* observer = nullptr) {
  const auto problem_text = read_problem(settings, verdict);
  const auto candidate_text = problem_text ? read_candidate(settings, verdict) : std::nullopt;
  if (!candidate_text) {
    return std::nullopt;
  }
  auto code = run_extract_stage(*candidate_text, verdict);
  report_stage(observer, verdict.stage(StageName::extract), settings);
  if (!code) {
    return std::nullopt;
  }
  const bool passed = run_static_stage(*code, *problem_text, settings, verdict);
  report_stage(observer, verdict.stage(StageName::static_analysis), settings);
  return passed ? std::optional<std::string>(std::move(code->code)) : std::nullopt;
}

void finish_verdict(Verdict& verdict, const EvalSettings& settings, Clock::time_point start) {
  mark_remaining_not_run(verdict);
  if (settings.entry_point) {
    name_entry_point(verdict, *settings.entry_point);
  }
  verdict.duration_s = seconds_since(start);
}

// Screens the candidate, then runs the worker stages in the session `with_session` gives (asked for
// only when they are reached).
Verdict evaluate_until_session(const EvalSettings& settings,
                               const std::function<ProblemSession&(const std::string& code)>& with_session,
                               runner::GpuGate* gate, runner::CandidateZygote* zygote, EvalObserver* observer,
                               std::optional<PrestartedCandidate>* prestarted = nullptr) {
  const auto start = Clock::now();
  Verdict verdict = new_verdict(settings);
  try {
    if (const auto code = screened_code(settings, verdict, observer)) {
      if (observer != nullptr) {
        observer->progress(StageName::compile,
                           "starting the judge: loading the problem, building its inputs");
      }
      auto& session = with_session(*code);
      run_worker_stages(settings, verdict, *code, session, gate, zygote, observer,
                        prestarted != nullptr ? std::move(*prestarted) : std::nullopt);
    }
  } catch (const std::exception& exc) {
    verdict.outcome = Outcome::error;
    verdict.error = EvaluationError{"environment", exc.what()};
  }
  finish_verdict(verdict, settings, start);
  return verdict;
}

}  // namespace

Verdict evaluate(const EvalSettings& settings, EvalObserver* observer) {
  std::optional<ProblemSession> session;
  std::optional<PrestartedCandidate> prestarted;  // declared after the session: stopped before its judge
  const auto start_session = [&](const std::string& code) -> ProblemSession& {
    return session.emplace(settings,
                           [&](ProblemSession& started) { prestarted.emplace(settings, started, code); });
  };
  return evaluate_until_session(settings, start_session, nullptr, nullptr, observer, &prestarted);
}

std::string unreadable_input(const EvalSettings& settings) {
  Verdict verdict;
  if (!read_source(settings.problem_path, "problem", verdict) ||
      (!settings.candidate_text && !read_source(settings.candidate_path, "candidate", verdict))) {
    return verdict.error ? verdict.error->message : "cannot read the input files";
  }
  return "";
}

std::optional<Verdict> screen(const EvalSettings& settings) {
  const auto start = Clock::now();
  Verdict verdict = new_verdict(settings);
  try {
    if (screened_code(settings, verdict)) {
      return std::nullopt;
    }
  } catch (const std::exception&) {
    return std::nullopt;  // the full evaluation reports it, with the judge's view of the environment
  }
  finish_verdict(verdict, settings, start);
  return verdict;
}

Verdict evaluate_in_session(const EvalSettings& settings, ProblemSession& session, runner::GpuGate* gate,
                            runner::CandidateZygote* zygote) {
  return evaluate_until_session(
      settings, [&](const std::string&) -> ProblemSession& { return session; }, gate, zygote, nullptr);
}

}  // namespace kforge::verify
