#include "cli/eval_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/batch_run.hpp"
#include "cli/common_options.hpp"
#include "cli/kernel_mode.hpp"
#include "cli/tritonbench_eval.hpp"
#include "problem/sample_set.hpp"
#include "report/batch_metrics.hpp"
#include "report/live_verdict_display.hpp"
#include "report/terminal_report.hpp"
#include "runner/environment_probe.hpp"
#include "schedule/evaluation_identity.hpp"
#include "source/text_file.hpp"
#include "store/result_store.hpp"
#include "verify/eval_pipeline.hpp"
#include "verify/interpreter_sizes.hpp"

namespace kforge::cli {
namespace {

struct EvalOptions {
  verify::EvalSettings settings;
  bool json = false;
  bool no_perf = false;
  bool no_generalisation = false;
  bool reference_beside = false;
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
  std::string emit_kernel_files;    // kernel mode: write the problem and candidate here instead of judging
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
    options.kernel_mode.keywords = made.keywords;
    options.kernel_mode.result = made.result;
    options.kernel_mode_note = made.describe(options.kernel_mode.entry);
    settings.candidate_text = kernel_candidate(options.kernel_mode, settings.candidate_path.string());
  } catch (const std::exception& error) {
    std::cerr << "kforge eval: " << error.what() << "\n";
    return false;
  }
  if (settings.candidate_path.empty()) {
    settings.candidate_path = options.kernel_mode.kernel;
  }
  settings.entry_point = options.kernel_mode.entry;
  return true;
}

// --emit-kernel-files DIR: kernel mode's generated reference problem and candidate as DIR/problem.py and
// DIR/candidate.py, so several kernel-mode evaluations (sizes, variants) can run as one batch.
int emit_kernel_files(const EvalOptions& options) {
  const std::filesystem::path folder(options.emit_kernel_files);
  try {
    std::filesystem::create_directories(folder);
    source::write_text_file(folder / "problem.py", source::read_text_file(options.settings.problem_path));
    source::write_text_file(folder / "candidate.py", options.settings.candidate_text.value_or(""));
  } catch (const std::exception& error) {
    std::cerr << "kforge eval: cannot write the kernel-mode files to " << folder.string() << ": "
              << error.what() << "\n";
    return 2;
  }
  std::cout << (folder / "problem.py").string() << "\n" << (folder / "candidate.py").string() << "\n";
  return 0;
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

// The header's first two lines: in kernel mode the user's file and wrapper, not the generated problem.
std::pair<std::string, std::string> header_names(const EvalOptions& options) {
  const auto& settings = options.settings;
  if (options.kernel_mode.active()) {
    return {fmt::format("{} (the wrapper {} is the reference)", options.kernel_mode.kernel,
                        options.kernel_mode.entry),
            settings.candidate_path.string()};
  }
  return {settings.problem_path.string(), settings.candidate_path.string()};
}

void print_reward_line(const nlohmann::json& document) {
  if (const auto reward = document.find("reward"); reward != document.end()) {
    std::cout << fmt::format("reward ({}): {} — {}\n", reward->value("formula", ""),
                             (*reward)["reward"].is_number()
                                 ? fmt::format("{:.4g}", (*reward)["reward"].get<double>())
                                 : std::string("none"),
                             reward->value("explanation", ""));
  }
}

int run_single(EvalOptions& options) {
  auto& settings = options.settings;
  if (!options.json) {  // a missing file is one line, not a table of stages that never ran
    if (const auto unreadable = verify::unreadable_input(settings); !unreadable.empty()) {
      std::cerr << "kforge eval: " << unreadable << "\n";
      return 2;
    }
  }
  const auto size_note = verify::choose_interpreter_sizes(settings, runner::resolve_device(settings.device));
  std::optional<report::LiveVerdictDisplay> display;
  if (!options.json) {
    const auto [problem, candidate] = header_names(options);
    display.emplace(std::cout, isatty(STDOUT_FILENO) != 0);
    display->start(problem, candidate,
                   size_note.text.empty() ? std::vector<std::string>{} : std::vector{size_note.text});
  } else if (!size_note.text.empty()) {
    std::cerr << size_note.text << "\n";
  }
  std::unique_ptr<store::ResultStore> store;
  if (!options.batch.no_store) {
    store =
        store::ResultStore::open(options.batch.store.empty() ? store::ResultStore::default_path()
                                                             : std::filesystem::path(options.batch.store));
  }
  std::optional<store::EvaluationIdentity> identity;
  auto document = stored_verdict(options, store.get(), identity);
  if (!document) {
    const auto verdict = verify::evaluate(settings, display ? &*display : nullptr);
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
    display->finish(*document);
    if (options.kernel_mode_note.is_object() && options.kernel_mode_note.value("writes_inferred", false)) {
      std::cout << fmt::format(
          "kernel mode: {} writes its outputs into argument(s) {} (inferred: they changed "
          "in the reference's call), compared like returned outputs\n",
          options.kernel_mode.entry, fmt::join(options.kernel_mode.writes, ", "));
    }
    print_reward_line(*document);
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
    std::cerr << "kforge eval: a batch needs --samples FILE.jsonl|RUN_DIR and either --suite DIR or "
                 "--kernelbench PATH --level N\n";
    return 2;
  }
  options.batch.small_when_interpreted = !options.settings.small && options.settings.sizes.empty();
  const auto lines = run_batch(load_batch_samples(options), options.settings, options.batch);
  std::vector<report::SampleResult> results;
  results.reserve(lines.size());
  std::size_t unusable = 0;
  for (const auto& line : lines) {
    if (line.contains("input_error")) {  // not a sample at all: it would skew every rate
      ++unusable;
      continue;
    }
    results.push_back(report::sample_result(line.value("problem", ""), line["verdict"]));
  }
  const auto metrics = report::compute_metrics(results);
  std::cout << (options.batch.json ? metrics.to_json().dump(2) + "\n" : metrics.render());
  std::cerr << fmt::format("results: {}\n", options.batch.results);
  if (unusable > 0) {
    std::cerr << fmt::format(
        "kforge eval: {} of {} lines of {} could not be used (input errors above); they are left out of "
        "the metrics: fix them and run again\n",
        unusable, lines.size(), options.samples);
    return 2;
  }
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
  settings.generalise = !options.no_generalisation;
  settings.reference_beside = options.reference_beside;
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
                   "--problem, --suite, --kernelbench or --kernel\n";
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
  if (!options.emit_kernel_files.empty()) {
    if (!options.kernel_mode.active()) {
      std::cerr << "kforge eval: --emit-kernel-files needs --kernel FILE --entry NAME\n";
      return 2;
    }
    return emit_kernel_files(options);
  }
  if (settings.problem_path.empty() || settings.candidate_path.empty()) {
    std::cerr << "kforge eval: give --problem FILE and --candidate FILE (or a batch: --suite DIR "
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
                   "problem file (KernelBench format: Model, get_inputs, get_init_inputs)")
      ->option_text("FILE");
  eval->add_option("--candidate,-c", settings.candidate_path,
                   "candidate file (class ModelNew) or an LLM response holding one fenced python block")
      ->option_text("FILE");
  add_device_option(*eval, settings.device);
  add_json_flag(*eval, options->json, "print the versioned JSON verdict instead of the summary");
  add_output_option(*eval, options->output, "also write the JSON verdict to this file");
  add_trials_option(*eval, settings.trials);
  eval->add_option("--atol", options->atol, "absolute tolerance for every output (default: by dtype)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("X");
  eval->add_option("--rtol", options->rtol, "relative tolerance for every output (default: by dtype)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("X");
  eval->add_option("--seed", settings.seed, "base seed of model construction and inputs")
      ->option_text("N")
      ->capture_default_str();
  eval->add_flag("--small", settings.small,
                 "use the problem's KFORGE_SMALL sizes (the default when --device auto finds no GPU)");
  eval->add_option("--size", options->sizes,
                   "override a module-level size constant of the problem: NAME=VALUE (repeatable)")
      ->option_text("NAME=VALUE")
      ->take_all();
  add_timeout_option(*eval, settings.timeout_s);
  eval->add_flag("--no-perf", options->no_perf, "skip timing even on a GPU");
  eval->add_flag("--no-generalisation", options->no_generalisation,
                 "skip the generalisation trial (the problem at other sizes and constructor numbers)");
  eval->add_option("--noise-target", settings.timing.noise_target,
                   "stop timing once the median's 95% CI half-width is below this fraction")
      ->check(CLI::Range(0.0001, 0.5))
      ->option_text("X")
      ->capture_default_str();
  add_time_budget_option(*eval, settings.timing.time_budget_s, "seconds of timing at most");
  eval->add_option("--profile", options->profile,
                   "static rule profile: strict rejects a candidate on any anti-cheating finding (for "
                   "benchmarks and rewards); lenient turns those findings into warnings for quick "
                   "iteration, except a missing Triton launch (rules: docs/rules.md)")
      ->check(CLI::IsMember({"strict", "lenient"}))
      ->option_text("strict|lenient")
      ->capture_default_str();
  add_python_option(*eval, options->python);
  eval->add_flag("--reference-beside", options->reference_beside,
                 "also time the reference in the candidate's process and compare the two there (the "
                 "problem's code then runs in the candidate's process; docs/verdict.md, \"Performance\")");
  eval->add_option("--baseline", settings.baseline,
                   "what the speedup is measured against: eager PyTorch or torch.compile of the reference")
      ->check(CLI::IsMember({"eager", "compile"}))
      ->option_text("eager|compile")
      ->capture_default_str();
  eval->add_option("--suite", options->problems,
                   "batch: folder of problems (<name>/problem.py, or KernelBench <id>_<Name>.py files)")
      ->option_text("DIR");
  add_deprecated_option(*eval, "--problems", "--suite", options->problems);
  eval->add_option("--kernelbench", options->kernelbench, "batch: a KernelBench checkout (with --level)")
      ->option_text("DIR");
  eval->add_option("--level", options->level, "batch: KernelBench level (1, 2, 3 or 4)")
      ->check(CLI::Range(1, 4))
      ->option_text("N");
  eval->add_option("--samples", options->samples,
                   "batch: JSON Lines of samples (docs/batch.md) or a KernelBench run folder of "
                   "level_L_problem_P_sample_S_kernel.py files; with --tritonbench: the model's answers "
                   "(TritonBench's JSONL or a folder of NAME.py)")
      ->option_text("FILE|DIR");
  add_batch_options(*eval, options->batch);
  options->kernel_mode.add_options(*eval);
  eval->add_option("--emit-kernel-files", options->emit_kernel_files,
                   "kernel mode: write the generated problem.py and candidate.py to this folder and stop "
                   "(to judge many sizes or variants as one batch with --suite/--samples)")
      ->option_text("DIR");
  options->tritonbench.add_options(*eval);
  return [options, eval]() { return eval->parsed() ? run_eval(*options) : -1; };
}

}  // namespace kforge::cli
