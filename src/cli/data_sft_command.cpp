#include "cli/data_sft_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/batch_run.hpp"
#include "cli/common_options.hpp"
#include "cli/dataset_files.hpp"
#include "cli/suite_selection.hpp"
#include "data/inductor_teacher.hpp"
#include "data/sft_collection.hpp"
#include "optimize/chat_endpoint.hpp"
#include "runner/environment_probe.hpp"
#include "schedule/eval_engine.hpp"
#include "serve/problem_registry.hpp"
#include "store/result_store.hpp"
#include "verify/interpreter_sizes.hpp"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

struct SftOptions {
  SuiteSelection selection;
  std::string teacher = "llm";
  int samples = 4;
  std::size_t concurrent_problems = 4;
  std::string out = "sft.jsonl";
  std::string format = "auto";
  std::string rejected;  // default: <out without extension>.rejected.jsonl
  std::string summary;   // default: <out without extension>.summary.json
  optimize::ChatEndpoint endpoint;
  std::string captures;              // the inductor teacher's captures (read when present, else written)
  double teacher_timeout_s = 900.0;  // per problem, for the inductor teacher
  verify::EvalSettings settings;
  std::string python;
  std::size_t jobs = 0;
  std::string store;
  bool no_store = false;
  bool fresh = false;
  bool no_generalisation = false;
};

fs::path beside(const std::string& out, const std::string& suffix) {
  fs::path path(out);
  return path.parent_path() / (path.stem().string() + suffix);
}

std::vector<data::SftProblem> sft_problems(const SuiteSelection& selection) {
  const auto catalog = selection.catalog();
  const auto style = selection.prompt_style(catalog);
  std::vector<data::SftProblem> problems;
  for (const auto& entry : catalog.entries()) {
    const auto source = read_named_text(entry.problem.string(), "problem");
    auto row = data::prompt_row(entry, source, style, problems.size());
    problems.push_back({entry, source, row["problem_id"].get<std::string>(), row["prompt"]});
  }
  return problems;
}

// The LLM teacher: the problem's prompt to an OpenAI-compatible endpoint, n samples in parallel.
data::Teacher llm_teacher(const SftOptions& options) {
  auto sampler = optimize::chat_endpoint_sampler(options.endpoint, options.settings.python);
  return [sampler](const data::SftProblem& problem, int n) {
    std::vector<optimize::ChatMessage> messages;
    for (const auto& message : problem.prompt) {
      messages.push_back({message.value("role", "user"), message.value("content", "")});
    }
    std::vector<data::TeacherSample> samples;
    for (auto& reply : sampler(messages, n)) {
      samples.push_back({std::move(reply.text), std::move(reply.error)});
    }
    return samples;
  };
}

// The inductor teacher compiles at the sizes the verifier uses, on its device.
data::Teacher teacher_for(const SftOptions& options) {
  if (options.teacher != "inductor") {
    return llm_teacher(options);
  }
  data::InductorTeacherSettings settings;
  settings.device = options.settings.device;
  settings.small = options.settings.small;
  settings.sizes = options.settings.sizes;
  settings.captures = options.captures;
  settings.python = options.settings.python;
  settings.timeout_s = options.teacher_timeout_s;
  return data::inductor_teacher(settings);
}

// Verifies one problem's samples on a long-lived engine: the problem's judge stays warm for its
// samples, candidates fork from a zygote, and the result store answers repeats (a rerun resumes).
class EngineVerifier {
 public:
  EngineVerifier(const SftOptions& options, store::ResultStore* store)
      : settings_(options.settings),
        device_(runner::resolve_device(options.settings.device)),
        teacher_chose_no_sizes_(options.teacher == "llm"),
        engine_(engine_options(options, store)) {}

  // All requests in one submission: -j evaluations at a time per device over the problems, each
  // problem's judge reused by its candidates, timing one at a time per GPU.
  std::vector<std::vector<nlohmann::json>> operator()(const std::vector<data::VerifyRequest>& requests) {
    std::vector<schedule::EvalJob> jobs;
    std::vector<std::pair<std::size_t, std::size_t>> slot;  // job index -> (request, candidate)
    std::vector<std::vector<nlohmann::json>> verdicts(requests.size());
    for (std::size_t r = 0; r < requests.size(); ++r) {
      const auto& problem = *requests[r].problem;
      verdicts[r].resize(requests[r].candidates.size());
      for (std::size_t c = 0; c < requests[r].candidates.size(); ++c) {
        schedule::EvalJob job;
        job.index = jobs.size();
        job.problem = problem.entry.name;
        job.settings = settings_;
        job.settings.problem_path = problem.entry.problem;
        if (teacher_chose_no_sizes_) {  // no GPU: the small sizes, as eval
          verify::choose_interpreter_sizes(job.settings, device_);
        }
        job.settings.candidate_text = requests[r].candidates[c];
        jobs.push_back(std::move(job));
        slot.emplace_back(r, c);
      }
    }
    engine_.submit(std::move(jobs), [&verdicts, &slot](const schedule::EvalOutcome& outcome) {
      const auto [request, candidate] = slot.at(outcome.index);
      verdicts[request][candidate] = outcome.verdict;
    });
    engine_.wait_idle();
    return verdicts;
  }

 private:
  static schedule::SchedulerOptions engine_options(const SftOptions& options, store::ResultStore* store) {
    schedule::SchedulerOptions engine;
    BatchOptions batch;
    engine.devices = batch_devices(batch, options.settings.device);
    engine.jobs_per_device = options.jobs > 0 ? options.jobs : default_jobs(engine.devices.size());
    engine.store = store;
    engine.reuse_stored = !options.fresh;
    engine.python = options.settings.python;
    return engine;
  }

  verify::EvalSettings settings_;
  std::string device_;  // where --device lands
  // An LLM answers at any size; the inductor teacher compiled for the sizes it was given, so they stay.
  bool teacher_chose_no_sizes_;
  schedule::EvalEngine engine_;
};

void write_json_file(const nlohmann::json& document, const fs::path& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  if (!out.flush()) {
    throw std::runtime_error(fmt::format("cannot write {}", path.string()));
  }
}

std::string speedup_line(const nlohmann::json& speedups) {
  if (speedups.value("count", 0) == 0) {
    return "no speedups (not timed: on the CPU the Triton interpreter gives no timing)";
  }
  return fmt::format("speedup of the kept samples: geomean {:.2f}x over {} (min {:.2f}x, max {:.2f}x)",
                     speedups["geomean"].get<double>(), speedups["count"].get<int>(),
                     speedups["min"].get<double>(), speedups["max"].get<double>());
}

int run_sft(SftOptions& options) {
  if (!options.python.empty()) {
    options.settings.python = options.python;
  }
  // Inductor's Triton is specialised to the captured sizes by construction (fixed grids, size asserts):
  // its samples are verified without the generalisation trial, and the summary says so.
  options.settings.generalise = !options.no_generalisation && options.teacher != "inductor";
  const auto rejected_path =
      options.rejected.empty() ? beside(options.out, ".rejected.jsonl") : fs::path(options.rejected);
  const auto summary_path =
      options.summary.empty() ? beside(options.out, ".summary.json") : fs::path(options.summary);
  try {
    for (const auto& path : {fs::path(options.out), rejected_path, summary_path}) {
      if (path.has_parent_path()) {
        fs::create_directories(path.parent_path());
      }
    }
    const auto problems = sft_problems(options.selection);
    std::unique_ptr<store::ResultStore> store;
    if (!options.no_store) {
      store = store::ResultStore::open(options.store.empty() ? store::ResultStore::default_path()
                                                             : fs::path(options.store));
    }
    EngineVerifier engine(options, store.get());
    const data::Verifier verifier = [&engine](const std::vector<data::VerifyRequest>& requests) {
      return engine(requests);
    };
    data::SftSettings settings;
    settings.teacher = options.teacher;
    settings.samples = options.samples;
    settings.concurrent_problems = options.concurrent_problems;
    settings.progress = [](std::size_t done, std::size_t total, const data::SftProblem& problem,
                           std::size_t kept) {
      std::cerr << fmt::format("kforge data sft: [{}/{}] {}: {} kept\n", done, total, problem.entry.name,
                               kept);
    };
    std::cerr << fmt::format("kforge data sft: asking the teacher for {} samples of each of {} problems\n",
                             options.samples, problems.size());
    auto collection = data::collect_sft(problems, teacher_for(options), verifier, settings);
    collection.summary["generalisation_trial"] =
        options.settings.generalise     ? "on"
        : options.teacher == "inductor" ? "off (the inductor teacher's code is specialised to its sizes)"
                                        : "off (--no-generalisation)";
    collection.summary["model"] =
        options.teacher == "llm" ? options.endpoint.model : "torch.compile (Inductor)";
    collection.summary["suite"] =
        problems.empty() ? "" : options.selection.suite + options.selection.kernelbench;
    collection.summary["device"] = options.settings.device;
    // The log and the summary first, then the rows: a Parquet failure (no pyarrow) must not lose the
    // teacher's samples, so the rows then go to a JSONL file beside it.
    write_jsonl(collection.rejected, rejected_path);
    write_json_file(collection.summary, summary_path);
    if (const auto failure = data::teacher_failure(collection); !failure.empty()) {
      std::cerr << fmt::format("kforge data sft: {} (every sample is logged in {})\n", failure,
                               rejected_path.string());
      return 2;
    }
    std::string format;
    try {
      format = write_rows(collection.rows, options.out, options.format, options.python);
    } catch (const std::exception& error) {
      const auto fallback = beside(options.out, ".jsonl.kept");
      write_jsonl(collection.rows, fallback);
      std::cerr << fmt::format("kforge data sft: {}; the {} kept rows are in {} (JSONL)\n", error.what(),
                               collection.rows.size(), fallback.string());
      return 2;
    }
    const auto& summary = collection.summary;
    std::cout << fmt::format(
        "kforge data sft: {} of {} samples accepted ({:.0f}%) over {} problems ({} with at least one); "
        "{}\n  kept: {} ({})\n  rejected: {}\n  summary: {}\n",
        summary["accepted"].get<std::size_t>(), summary["samples"].get<std::size_t>(),
        100.0 * summary["acceptance_rate"].get<double>(), summary["problems"].get<std::size_t>(),
        summary["problems_with_accepted"].get<std::size_t>(), speedup_line(summary["speedup_of_kept"]),
        options.out, format, rejected_path.string(), summary_path.string());
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "kforge data sft: " << error.what() << "\n";
    return 2;
  }
}

void add_teacher_options(CLI::App& command, SftOptions& options) {
  command
      .add_option("--teacher", options.teacher,
                  "where candidates come from: llm (an OpenAI-compatible endpoint) or inductor "
                  "(torch.compile's Triton code made standalone; needs a GPU or --captures)")
      ->check(CLI::IsMember({"llm", "inductor"}))
      ->option_text("llm|inductor")
      ->capture_default_str();
  command.add_option("--samples-per-problem,-n", options.samples, "samples asked of the teacher per problem")
      ->check(CLI::Range(1, 256))
      ->option_text("N")
      ->capture_default_str();
  add_deprecated_option(command, "--samples", "--samples-per-problem", options.samples)
      ->check(CLI::Range(1, 256));
  command
      .add_option("--concurrent-problems", options.concurrent_problems,
                  "problems whose teacher requests run at once (each asks for its samples in parallel)")
      ->check(CLI::Range(1, 64))
      ->option_text("N")
      ->capture_default_str();
  add_llm_endpoint_options(command, options.endpoint);
  command
      .add_option("--captures", options.captures,
                  "inductor: folder of captures, read when it holds a problem's, written otherwise "
                  "(a capture made on a GPU is rewritten anywhere)")
      ->option_text("DIR");
  command.add_option("--teacher-timeout", options.teacher_timeout_s, "inductor: seconds per problem")
      ->check(CLI::PositiveNumber)
      ->option_text("SECONDS")
      ->capture_default_str();
}

void add_verification_options(CLI::App& command, SftOptions& options) {
  auto& settings = options.settings;
  add_device_option(command, settings.device);
  command.add_flag("--small", settings.small, "use the problems' KFORGE_SMALL sizes");
  add_time_budget_option(command, settings.timing.time_budget_s, "seconds of timing per accepted sample");
  command.add_option("--jobs,-j", options.jobs, "evaluations in flight per device (default: by cores)")
      ->option_text("N");
  command.add_option("--store", options.store, "result store (a rerun answers repeated samples from it)")
      ->option_text("FILE");
  command.add_flag("--no-store", options.no_store, "keep no results");
  command.add_flag("--fresh", options.fresh, "evaluate again even when the store has a verdict");
  command.add_flag("--no-generalisation", options.no_generalisation,
                   "verify without the generalisation trial (always off for the inductor teacher)");
  add_python_option(command, options.python);
}

}  // namespace

std::function<int()> add_sft_subcommand(CLI::App& data) {
  auto options = std::make_shared<SftOptions>();
  auto* sft = data.add_subcommand(
      "sft", "verified SFT data: a teacher's candidates for each problem, only the accepted ones kept");
  options->selection.add_options(*sft);
  add_teacher_options(*sft, *options);
  add_output_option(*sft, options->out, "the SFT dataset (.jsonl, or .parquet for Parquet)")
      ->capture_default_str();
  add_deprecated_option(*sft, "--out", "--output", options->out);
  sft->add_option("--format", options->format,
                  "auto (by --output's extension), jsonl or parquet (Parquet needs pyarrow in --python)")
      ->check(CLI::IsMember({"auto", "jsonl", "parquet"}))
      ->option_text("auto|jsonl|parquet")
      ->capture_default_str();
  sft->add_option("--rejected", options->rejected,
                  "every rejected sample with its stage and reason (default OUTPUT.rejected.jsonl)")
      ->option_text("FILE");
  sft->add_option("--summary", options->summary,
                  "acceptance and speedups as JSON (default OUTPUT.summary.json)")
      ->option_text("FILE");
  add_verification_options(*sft, *options);
  options->settings.candidate_path = "teacher-sample.md";
  return [options, sft]() {
    if (!sft->parsed()) {
      return -1;
    }
    if (const auto missing = options->selection.missing(); !missing.empty()) {
      std::cerr << "kforge data sft: " << missing << "\n";
      return 2;
    }
    if (options->teacher == "inductor") {
      if (const auto problem = data::inductor_teacher_problem(
              runner::resolve_device(options->settings.device), options->captures);
          !problem.empty()) {
        std::cerr << "kforge data sft: " << problem << "\n";
        return 2;
      }
      if (options->samples != 1 && sft->count("--samples-per-problem") + sft->count("--samples") > 0) {
        std::cerr
            << "kforge data sft: the inductor teacher is deterministic; it gives one sample per problem\n";
      }
      options->samples = 1;
      return run_sft(*options);
    }
    if (options->endpoint.url.empty() || options->endpoint.model.empty()) {
      std::cerr
          << "kforge data sft: --teacher llm needs --llm-url (e.g. http://127.0.0.1:8000/v1) and --model\n";
      return 2;
    }
    return run_sft(*options);
  };
}

}  // namespace kforge::cli
