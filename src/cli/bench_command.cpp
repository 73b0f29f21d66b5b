#include "cli/bench_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/batch_run.hpp"
#include "cli/common_options.hpp"
#include "problem/corpus_manifest.hpp"
#include "problem/corpus_selection.hpp"
#include "problem/sample_set.hpp"
#include "report/batch_metrics.hpp"
#include "report/corpus_report.hpp"
#include "runner/environment_probe.hpp"
#include "schedule/eval_scheduler.hpp"
#include "verify/eval_pipeline.hpp"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

struct BenchOptions {
  std::string suite;
  std::string corpus;
  std::string problems;
  std::string device = "auto";
  std::vector<std::string> only;
  std::string output;
  std::string python;
  bool json = false;
  bool full_size = false;
  int trials = 5;
  double timeout_s = 120.0;
  double time_budget_s = 10.0;
  std::string baseline = "eager";
};

// The repository's problems/ next to a corpus in tests/corpus, unless --problems says otherwise.
fs::path problems_root(const BenchOptions& options) {
  if (!options.problems.empty()) {
    return options.problems;
  }
  const fs::path beside = fs::absolute(options.corpus) / ".." / ".." / "problems";
  std::error_code error;
  return fs::is_directory(beside, error) ? beside.lexically_normal() : fs::path("problems");
}

verify::EvalSettings entry_settings(const BenchOptions& options, const problem::CorpusEntry& entry) {
  verify::EvalSettings settings;
  settings.problem_path = entry.problem;
  settings.candidate_path = entry.candidate;
  settings.device = options.device;
  settings.trials = options.trials;
  settings.small = !options.full_size;
  settings.timeout_s = options.timeout_s;
  settings.profile = entry.profile == "lenient" ? rules::Profile::lenient : rules::Profile::strict;
  if (!options.python.empty()) {
    settings.python = options.python;
  }
  return settings;
}

// Runs every selected entry through the batch engine (the path RL and benchmark batches take: shared
// judges, candidates forked from the zygote unless --no-zygote, the GPU gate), `jobs` at a time, never
// from the store; GPU-only entries are skipped on the CPU.
std::vector<report::CorpusRow> run_entries(const BenchOptions& options,
                                           const std::vector<problem::CorpusEntry>& entries,
                                           const BatchOptions& batch, bool cpu, std::size_t jobs) {
  std::vector<report::CorpusRow> rows;
  rows.reserve(entries.size());
  for (const auto& entry : entries) {
    const char* skipped = entry.gpu_only ? "GPU-only entry, not run on the CPU"
                                         : "CPU-only entry (a Triton-interpreter trick), not run on a GPU";
    rows.push_back({entry, {verify::CorpusResult::skipped, skipped}, 0.0});
  }
  std::vector<schedule::EvalJob> work;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if ((cpu && rows[i].entry.gpu_only) || (!cpu && rows[i].entry.cpu_only)) {
      continue;
    }
    schedule::EvalJob job;
    job.index = i;
    job.problem = rows[i].entry.problem.parent_path().filename().string();
    job.settings = entry_settings(options, rows[i].entry);
    work.push_back(std::move(job));
  }
  schedule::SchedulerOptions scheduler;
  scheduler.devices = batch_devices(batch, options.device);
  scheduler.jobs_per_device = jobs;
  std::cerr << fmt::format("kforge bench: {} of {} entries to run on {}, {} at a time{}\n", work.size(),
                           rows.size(), fmt::join(scheduler.devices, ","), jobs,
                           work.size() < rows.size() ? " (GPU-only entries are skipped on the CPU)" : "");
  scheduler.reuse_stored = false;  // a corpus run always evaluates: it tests the verifier, not the store
  scheduler.use_zygote = !batch.no_zygote;
  std::size_t done = 0;
  const std::size_t total = work.size();
  scheduler.on_result = [&](const schedule::EvalOutcome& outcome) {
    auto& row = rows.at(outcome.index);
    row.outcome = verify::judge_corpus_entry(row.entry, outcome.verdict);
    row.duration_s = outcome.seconds;
    std::cerr << fmt::format("[{}/{}] {:<11} {} ({:.1f} s)\n", ++done, total, to_string(row.outcome.result),
                             row.entry.candidate_name, row.duration_s);
  };
  schedule::EvalScheduler(scheduler).run(std::move(work));
  return rows;
}

// A suite's reference solutions through the batch engine: the suite is valid when every one is accepted.
int run_suite(const BenchOptions& options, BatchOptions batch) {
  const auto catalog = problem::ProblemCatalog::from_folder(options.suite);
  verify::EvalSettings base;
  base.device = options.device;
  base.trials = options.trials;
  base.small = !options.full_size;
  base.timeout_s = options.timeout_s;
  base.timing.time_budget_s = options.time_budget_s;
  base.baseline = options.baseline;
  if (!options.python.empty()) {
    base.python = options.python;
  }
  batch.json = options.json;
  const auto lines = run_batch(problem::reference_solutions(catalog), base, batch);
  std::vector<report::SampleResult> results;
  std::size_t accepted = 0;
  for (const auto& line : lines) {
    results.push_back(report::sample_result(line.value("problem", ""), line["verdict"]));
    accepted += results.back().correct ? 1U : 0U;
    if (!results.back().correct) {
      std::cerr << fmt::format("INVALID {}: {}\n", line.value("problem", "?"), line.value("summary", ""));
    }
  }
  const auto metrics = report::compute_metrics(results);
  if (options.json) {
    std::cout << nlohmann::json{{"suite", options.suite},
                                {"valid", accepted == lines.size()},
                                {"accepted", accepted},
                                {"problems", lines.size()},
                                {"metrics", metrics.to_json()}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << fmt::format("suite {}: {}/{} reference solutions accepted ({})\n", options.suite, accepted,
                             lines.size(), accepted == lines.size() ? "valid" : "INVALID")
              << metrics.render();
  }
  return accepted == lines.size() ? 0 : 1;
}

int run_bench(const BenchOptions& options, const BatchOptions& batch) {
  if (!options.suite.empty() && !options.corpus.empty()) {
    std::cerr << "kforge bench: give either a SUITE folder or --corpus DIR, not both\n";
    return 2;
  }
  if (!options.suite.empty()) {
    try {
      return run_suite(options, batch);
    } catch (const std::exception& error) {
      std::cerr << "kforge bench: " << error.what() << "\n";
      return 2;
    }
  }
  if (options.corpus.empty()) {
    std::cerr << "kforge bench: give a suite folder (kforge bench problems/starter) or a corpus with "
                 "--corpus DIR (for example tests/corpus)\n";
    return 2;
  }
  std::vector<problem::CorpusEntry> entries;
  try {
    entries = problem::select_corpus_entries(
        problem::load_corpus_manifest(options.corpus, problems_root(options)), options.only);
  } catch (const std::exception& error) {
    std::cerr << "kforge bench: " << error.what() << "\n";
    return 2;
  }
  const bool cpu = runner::resolve_device(options.device) == "cpu";
  const std::size_t hardware = std::max(1U, std::thread::hardware_concurrency());
  const std::size_t jobs = batch.jobs > 0 ? batch.jobs : std::min<std::size_t>(hardware, 4);
  std::vector<report::CorpusRow> rows;
  try {
    rows = run_entries(options, entries, batch, cpu, jobs);
  } catch (const std::exception& error) {
    std::cerr << "kforge bench: " << error.what() << "\n";
    return 2;
  }
  const std::string device = cpu ? "cpu (Triton interpreter)" : runner::resolve_device(options.device);
  const auto document = report::corpus_report_json(rows, device);
  if (!options.output.empty()) {
    std::ofstream(options.output) << document.dump(2) << "\n";
  }
  std::cout << (options.json ? document.dump(2) + "\n" : report::render_corpus_report(rows, device));
  const bool failed =
      std::any_of(rows.begin(), rows.end(), [](const auto& row) { return is_failure(row.outcome.result); });
  return failed ? 1 : 0;
}

}  // namespace

std::function<int()> add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  auto batch = std::make_shared<BatchOptions>();
  auto* bench = app.add_subcommand(
      "bench", "run a suite's reference solutions (suite validity, KernelBench metrics) or a hostile corpus");
  bench
      ->add_option("suite,--suite", options->suite,
                   "suite folder of <name>/problem.py + solution.py (e.g. problems/starter)")
      ->option_text("DIR");
  bench->add_option("--corpus", options->corpus, "corpus folder with a manifest.json (e.g. tests/corpus)")
      ->option_text("DIR");
  add_batch_options(*bench, *batch);
  bench
      ->add_option("--problems-root", options->problems,
                   "corpus: folder the manifest's problem names are relative to (default: the repository's "
                   "problems/)")
      ->option_text("DIR");
  add_deprecated_option(*bench, "--problems", "--problems-root", options->problems);
  add_device_option(*bench, options->device);
  bench
      ->add_option("--only", options->only,
                   "corpus: run only this exploit class (honest: the honest candidates) or this candidate "
                   "file; repeatable")
      ->option_text("CLASS|FILE");
  add_trials_option(*bench, options->trials);
  add_timeout_option(*bench, options->timeout_s);
  add_time_budget_option(*bench, options->time_budget_s, "suite: seconds of timing at most per solution");
  bench
      ->add_option("--baseline", options->baseline,
                   "suite: what the speedups are against: eager PyTorch or torch.compile of the reference")
      ->check(CLI::IsMember({"eager", "compile"}))
      ->option_text("eager|compile")
      ->capture_default_str();
  bench->add_flag("--full-size", options->full_size,
                  "use the problems' full sizes (default: KFORGE_SMALL sizes)");
  add_json_flag(*bench, options->json, "print the JSON report instead of the table");
  add_output_option(*bench, options->output, "also write the JSON report to this file");
  add_python_option(*bench, options->python);
  return [options, batch, bench]() { return bench->parsed() ? run_bench(*options, *batch) : -1; };
}

}  // namespace kforge::cli
