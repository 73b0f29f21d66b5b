#include "cli/eval_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/batch_run.hpp"
#include "cli/kernel_mode.hpp"
#include "cli/tritonbench_eval.hpp"
#include "problem/sample_set.hpp"
#include "report/batch_metrics.hpp"
#include "report/terminal_report.hpp"
#include "runner/environment_probe.hpp"
#include "schedule/evaluation_identity.hpp"
#include "store/result_store.hpp"
#include "verify/eval_pipeline.hpp"

namespace kforge::cli {
namespace {

struct EvalOptions {
  verify::EvalSettings settings;
  bool json = false;
  bool no_perf = false;
  std::string profile = "strict";
  std::string python;
  std::string output;
  std::vector<std::string> sizes;
  double atol = -1.0;
  double rtol = -1.0;
  std::string problems;     // batch: a suite folder
  std::string kernelbench;  // batch: a KernelBench checkout (with --level)
  int level = 0;
  std::string samples;  // batch: JSONL file or KernelBench run folder
  BatchOptions batch;
  KernelModeOptions kernel_mode;
  nlohmann::json kernel_mode_note;  // kernel mode: the entry and the arguments compared, for the verdict
  TritonBenchOptions tritonbench;
};

// Kernel mode: the generated reference problem, and the candidate (the variant, or the original itself).
bool apply_kernel_mode(EvalOptions& options) {
  auto& settings = options.settings;
  if (const auto problem = options.kernel_mode.usage_problem(settings.problem_path); !problem.empty()) {
    std::cerr << "kforge eval: " << problem << "\n";
    return false;
  }
  if (!options.kernel_mode.active()) {
    return true;
  }
  try {
    const auto made = write_kernel_problem(options.kernel_mode, settings);
    settings.problem_path = made.problem;
    options.kernel_mode.writes = made.writes;
    options.kernel_mode_note = made.describe(options.kernel_mode.entry);
    settings.candidate_text = kernel_candidate(options.kernel_mode, settings.candidate_path.string());
  } catch (const std::exception& error) {
    std::cerr << "kforge eval: " << error.what() << "\n";
    return false;
  }
  if (settings.candidate_path.empty()) {
    settings.candidate_path = options.kernel_mode.kernel;
  }
  return true;
}

// NAME=VALUE pairs; a malformed one is a usage error.
bool parse_sizes(const std::vector<std::string>& pairs, std::map<std::string, std::string>& sizes) {
  for (const auto& pair : pairs) {
    const auto equals = pair.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == pair.size()) {
      std::cerr << fmt::format("kforge eval: --size expects NAME=VALUE, got '{}'\n", pair);
      return false;
    }
    sizes[pair.substr(0, equals)] = pair.substr(equals + 1);
  }
  return true;
}

// The store's verdict for these settings, if the store is on and holds one.
std::optional<nlohmann::json> stored_verdict(const EvalOptions& options, store::ResultStore* store,
                                             std::optional<store::EvaluationIdentity>& identity) {
  if (store == nullptr) {
    return std::nullopt;
  }
  try {
    const auto python = runner::find_python_environment(options.settings.python);
    const auto device = batch_devices(options.batch, options.settings.device).front();
    identity = schedule::evaluation_identity(options.settings, runner::probe_environment(python, device));
  } catch (const std::exception&) {
    return std::nullopt;  // an unreadable file or a broken Python: the evaluation reports it
  }
  return options.batch.fresh ? std::nullopt : store->find_verdict(*identity);
}

int run_single(EvalOptions& options) {
  std::unique_ptr<store::ResultStore> store;
  if (!options.batch.no_store) {
    store =
        store::ResultStore::open(options.batch.store.empty() ? store::ResultStore::default_path()
                                                             : std::filesystem::path(options.batch.store));
  }
  std::optional<store::EvaluationIdentity> identity;
  auto document = stored_verdict(options, store.get(), identity);
  if (!document) {
    const auto verdict = verify::evaluate(options.settings);
    document = verify::to_json(verdict);
    if (store && identity && verdict.outcome != verify::Outcome::error) {
      store->put_verdict(*identity, *document);
    }
  }
  if (!options.kernel_mode_note.is_null()) {
    (*document)["kernel_mode"] = options.kernel_mode_note;  // what kforge compared, and what it inferred
  }
  const auto verdict = *document;
  attach_reward(*document, verdict, reward_spec(options.batch));  // computed, never stored
  // Replace invalid UTF-8 (a candidate may print any bytes) rather than throw while reporting.
  const auto text = document->dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!options.output.empty()) {
    std::ofstream(options.output) << text << "\n";
  }
  if (options.json) {
    std::cout << text << "\n";
  } else {
    std::cout << report::render_terminal(*document, isatty(STDOUT_FILENO) != 0);
    if (options.kernel_mode_note.value("writes_inferred", false)) {
      std::cout << fmt::format(
          "kernel mode: {} writes its outputs into argument(s) {} (inferred: they changed "
          "in the reference's call), compared like returned outputs\n",
          options.kernel_mode.entry, fmt::join(options.kernel_mode.writes, ", "));
    }
    if (const auto reward = document->find("reward"); reward != document->end()) {
      std::cout << fmt::format("reward ({}): {} — {}\n", reward->value("formula", ""),
                               (*reward)["reward"].is_number()
                                   ? fmt::format("{:.4g}", (*reward)["reward"].get<double>())
                                   : std::string("none"),
                               reward->value("explanation", ""));
    }
  }
  const auto outcome = document->value("outcome", "error");
  return outcome == "accepted" ? 0 : outcome == "rejected" ? 1 : 2;
}

std::vector<problem::Sample> load_batch_samples(const EvalOptions& options) {
  const auto catalog = options.kernelbench.empty()
                           ? problem::ProblemCatalog::from_folder(options.problems)
                           : problem::ProblemCatalog::from_kernelbench(options.kernelbench, options.level);
  std::error_code error;
  if (std::filesystem::is_directory(options.samples, error)) {
    return problem::load_kernelbench_run(
        options.samples, catalog, options.level > 0 ? std::optional<int>(options.level) : std::nullopt);
  }
  return problem::load_samples_jsonl(options.samples, catalog);
}

int run_batch_eval(EvalOptions& options) {
  if (options.samples.empty() || (options.problems.empty() == options.kernelbench.empty()) ||
      (!options.kernelbench.empty() && options.level <= 0)) {
    std::cerr << "kforge eval: a batch needs --samples FILE.jsonl|RUN_DIR and either --problems DIR or "
                 "--kernelbench PATH --level N\n";
    return 2;
  }
  const auto lines = run_batch(load_batch_samples(options), options.settings, options.batch);
  std::vector<report::SampleResult> results;
  results.reserve(lines.size());
  for (const auto& line : lines) {
    results.push_back(report::sample_result(line.value("problem", ""), line["verdict"]));
  }
  const auto metrics = report::compute_metrics(results);
  std::cout << (options.batch.json ? metrics.to_json().dump(2) + "\n" : metrics.render());
  std::cerr << fmt::format("results: {}\n", options.batch.results);
  return 0;
}

int run_eval(EvalOptions& options) {
  auto& settings = options.settings;
  if (!parse_sizes(options.sizes, settings.sizes)) {
    return 2;
  }
  if (options.atol >= 0) {
    settings.atol = options.atol;
  }
  if (options.rtol >= 0) {
    settings.rtol = options.rtol;
  }
  if (!options.python.empty()) {
    settings.python = options.python;
  }
  settings.profile = options.profile == "lenient" ? rules::Profile::lenient : rules::Profile::strict;
  settings.measure_performance = !options.no_perf;
  options.batch.json = options.json;
  try {
    reward_spec(options.batch);
  } catch (const std::invalid_argument& error) {
    std::cerr << "kforge eval: " << error.what() << "\n";
    return 2;
  }
  if (const auto problem = options.tritonbench.usage_problem(); !problem.empty()) {
    std::cerr << "kforge eval: " << problem << "\n";
    return 2;
  }
  if (options.tritonbench.active()) {
    if (!options.problems.empty() || !options.kernelbench.empty() || options.kernel_mode.active() ||
        !settings.problem_path.empty()) {
      std::cerr << "kforge eval: --tritonbench judges a TritonBench checkout's items; give it without "
                   "--problem, --problems, --kernelbench or --kernel\n";
      return 2;
    }
    return run_tritonbench(options.tritonbench, settings, options.samples, options.json, options.output,
                           options.batch);
  }
  const bool batch = !options.samples.empty() || !options.problems.empty() || !options.kernelbench.empty();
  if (batch) {
    return run_batch_eval(options);
  }
  if (!apply_kernel_mode(options)) {
    return 2;
  }
  if (settings.problem_path.empty() || settings.candidate_path.empty()) {
    std::cerr << "kforge eval: give --problem FILE and --candidate FILE (or a batch: --problems DIR "
                 "--samples FILE.jsonl; or a Triton file as its own reference: --kernel FILE --entry NAME)\n";
    return 2;
  }
  return run_single(options);
}

}  // namespace

std::function<int()> add_eval_command(CLI::App& app) {
  auto options = std::make_shared<EvalOptions>();
  auto& settings = options->settings;
  auto* eval = app.add_subcommand("eval", "Judge a Triton candidate against a PyTorch reference problem");
  eval->add_option("--problem,-p", settings.problem_path,
                   "problem file (KernelBench format: Model, get_inputs, "
                   "get_init_inputs)");
  eval->add_option("--candidate,-c", settings.candidate_path,
                   "candidate file (class ModelNew) or an LLM response holding one fenced python block");
  eval->add_option("--device,-d", settings.device, "auto (GPU if present), cpu, or cuda:N")
      ->capture_default_str();
  eval->add_flag("--json", options->json, "print the versioned JSON verdict instead of the summary");
  eval->add_option("--output,-o", options->output, "also write the JSON verdict to this file");
  eval->add_option("--trials", settings.trials, "correctness trials, each with fresh inputs")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  eval->add_option("--atol", options->atol, "absolute tolerance for every output (default: by dtype)")
      ->check(CLI::NonNegativeNumber);
  eval->add_option("--rtol", options->rtol, "relative tolerance for every output (default: by dtype)")
      ->check(CLI::NonNegativeNumber);
  eval->add_option("--seed", settings.seed, "base seed of model construction and inputs")
      ->capture_default_str();
  eval->add_flag("--small", settings.small, "use the problem's KFORGE_SMALL sizes (fast CPU runs)");
  eval->add_option("--size", options->sizes,
                   "override a module-level size constant of the problem: NAME=VALUE")
      ->take_all();
  eval->add_option("--timeout", settings.timeout_s, "seconds allowed for each call into a worker")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  eval->add_flag("--no-perf", options->no_perf, "skip timing even on a GPU");
  eval->add_option("--noise-target", settings.timing.noise_target,
                   "stop timing once the median's 95% CI half-width is below this fraction")
      ->check(CLI::Range(0.0001, 0.5))
      ->capture_default_str();
  eval->add_option("--time-budget", settings.timing.time_budget_s, "seconds of timing at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  eval->add_option("--profile", options->profile,
                   "static rule profile: strict rejects a candidate on any anti-cheating finding (for "
                   "benchmarks and rewards); lenient turns those findings into warnings for quick "
                   "iteration, except a missing Triton launch (rules: docs/rules.md)")
      ->check(CLI::IsMember({"strict", "lenient"}))
      ->capture_default_str();
  eval->add_option("--python", options->python,
                   "Python interpreter with torch and triton (default: the "
                   "project's .venv, $KFORGE_PYTHON, or python3)");
  eval->add_option("--baseline", settings.baseline,
                   "what the speedup is measured against: eager PyTorch or torch.compile of the reference")
      ->check(CLI::IsMember({"eager", "compile"}))
      ->capture_default_str();
  eval->add_option("--problems", options->problems,
                   "batch: folder of problems (<name>/problem.py, or KernelBench <id>_<Name>.py files)");
  eval->add_option("--kernelbench", options->kernelbench, "batch: a KernelBench checkout (with --level)");
  eval->add_option("--level", options->level, "batch: KernelBench level (1, 2, 3, ...)");
  eval->add_option("--samples", options->samples,
                   "batch: JSON Lines of samples (docs/batch.md) or a KernelBench run folder of "
                   "level_L_problem_P_sample_S_kernel.py files; with --tritonbench: the model's answers "
                   "(TritonBench's JSONL or a folder of NAME.py)");
  add_batch_options(*eval, options->batch);
  options->kernel_mode.add_options(*eval);
  options->tritonbench.add_options(*eval);
  return [options, eval]() { return eval->parsed() ? run_eval(*options) : -1; };
}

}  // namespace kforge::cli
