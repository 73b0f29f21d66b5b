#include "cli/bench_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/batch_run.hpp"
#include "problem/corpus_manifest.hpp"
#include "problem/sample_set.hpp"
#include "report/batch_metrics.hpp"
#include "report/corpus_report.hpp"
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
  std::string only;
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
                                           const problem::CorpusManifest& manifest, const BatchOptions& batch,
                                           bool cpu, std::size_t jobs) {
  std::vector<report::CorpusRow> rows;
  for (const auto& entry : manifest.entries) {
    if (options.only.empty() || entry.candidate_name.find(options.only) != std::string::npos ||
        entry.exploit_class == options.only) {
      const char* skipped = entry.gpu_only ? "GPU-only entry, not run on the CPU"
                                           : "CPU-only entry (a Triton-interpreter trick), not run on a GPU";
      rows.push_back({entry, {verify::CorpusResult::skipped, skipped}, 0.0});
    }
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
  problem::CorpusManifest manifest;
  try {
    manifest = problem::load_corpus_manifest(options.corpus, problems_root(options));
  } catch (const std::exception& error) {
    std::cerr << "kforge bench: " << error.what() << "\n";
    return 2;
  }
  const bool cpu = options.device == "cpu";
  const std::size_t hardware = std::max(1U, std::thread::hardware_concurrency());
  const std::size_t jobs = batch.jobs > 0 ? batch.jobs : std::min<std::size_t>(hardware, 4);
  std::vector<report::CorpusRow> rows;
  try {
    rows = run_entries(options, manifest, batch, cpu, jobs);
  } catch (const std::exception& error) {
    std::cerr << "kforge bench: " << error.what() << "\n";
    return 2;
  }
  const std::string device = cpu ? "cpu (Triton interpreter)" : options.device;
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
  bench->add_option("suite", options->suite,
                    "suite folder of <name>/problem.py + solution.py (e.g. problems/starter)");
  bench->add_option("--corpus", options->corpus, "corpus folder with a manifest.json (e.g. tests/corpus)");
  add_batch_options(*bench, *batch);
  bench->add_option(
      "--problems", options->problems,
      "folder the manifest's problem names are relative to (default: the repository's problems/)");
  bench->add_option("--device,-d", options->device, "auto (GPU if present), cpu, or cuda:N")
      ->capture_default_str();
  bench->add_option("--only", options->only,
                    "run only entries of this class or whose file name contains this");
  bench->add_option("--trials", options->trials, "correctness trials per entry")->capture_default_str();
  bench
      ->add_option("--timeout", options->timeout_s,
                   "seconds allowed for each call into a worker (the compile stage gets at least 120 s)")
      ->capture_default_str();
  bench->add_option("--time-budget", options->time_budget_s, "suite: seconds of timing at most per solution")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench
      ->add_option("--baseline", options->baseline,
                   "suite: what the speedups are against: eager PyTorch or torch.compile of the reference")
      ->check(CLI::IsMember({"eager", "compile"}))
      ->capture_default_str();
  bench->add_flag("--full-size", options->full_size,
                  "use the problems' full sizes (default: KFORGE_SMALL sizes)");
  bench->add_flag("--json", options->json, "print the JSON report instead of the table");
  bench->add_option("--output,-o", options->output, "also write the JSON report to this file");
  bench->add_option("--python", options->python, "Python interpreter with torch and triton");
  return [options, batch, bench]() { return bench->parsed() ? run_bench(*options, *batch) : -1; };
}

}  // namespace kforge::cli
