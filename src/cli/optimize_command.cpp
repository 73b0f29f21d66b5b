#include "cli/optimize_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/profile_settings.hpp"
#include "optimize/knob_tuner.hpp"
#include "optimize/optimize_report.hpp"
#include "profile/profile_run.hpp"
#include "schedule/eval_engine.hpp"
#include "source/code_extraction.hpp"
#include "source/text_file.hpp"
#include "store/result_store.hpp"
#include "verify/eval_pipeline.hpp"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

constexpr double kNearRoofline = 0.95;  // within 5% of the roofline there is nothing left to tune

struct OptimizeOptions {
  verify::EvalSettings settings;
  std::string from;
  std::string proposers = "tune";
  std::string out;
  std::string python;
  std::string store;
  bool no_store = false;
  bool no_profile = false;
  optimize::TunerSettings tuner;
  double screen_time_s = 0.5;
  double final_time_s = 2.0;
};

// Runs each round's proposals through the batch engine: one warm judge for the problem (its reference
// outputs and timings cached), candidates forked from a zygote, compile and correctness side by side,
// timing one at a time; the result store in front, so a rerun resumes.
class EngineEvaluator {
 public:
  EngineEvaluator(const OptimizeOptions& options, store::ResultStore* store)
      : options_(options), engine_(engine_options(options, store)) {}

  // The objective is the candidate's time against a fixed reference: the first timed reference median
  // over each proposal's paired speedup, so the drift between separate evaluations cancels.
  std::vector<optimize::ProposalResult> operator()(const std::vector<std::string>& sources,
                                                   optimize::Measurement measurement) {
    std::vector<schedule::EvalJob> jobs;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      schedule::EvalJob job;
      job.index = i;
      job.problem = options_.settings.problem_path.stem().string();
      job.settings = options_.settings;
      job.settings.candidate_text = sources[i];
      job.settings.timing.time_budget_s =
          measurement == optimize::Measurement::final ? options_.final_time_s : options_.screen_time_s;
      jobs.push_back(std::move(job));
    }
    std::vector<nlohmann::json> verdicts(sources.size());
    engine_.submit(std::move(jobs), [&verdicts](const schedule::EvalOutcome& outcome) {
      verdicts.at(outcome.index) = outcome.verdict;
    });
    engine_.wait_idle();
    std::vector<optimize::ProposalResult> results;
    results.reserve(verdicts.size());
    for (const auto& verdict : verdicts) {
      results.push_back(result_of(verdict));
    }
    return results;
  }

 private:
  static schedule::SchedulerOptions engine_options(const OptimizeOptions& options,
                                                   store::ResultStore* store) {
    schedule::SchedulerOptions engine;
    engine.devices = {options.settings.device};
    engine.store = store;
    engine.python = options.settings.python;
    return engine;
  }

  optimize::ProposalResult result_of(const nlohmann::json& verdict) {
    optimize::ProposalResult result{verdict.value("outcome", "") == "accepted", std::nullopt,
                                    verdict.value("summary", "")};
    const auto speedup = verdict.find("speedup");
    if (result.accepted && speedup != verdict.end() && speedup->is_number() && speedup->get<double>() > 0) {
      if (!reference_ms_) {
        reference_ms_ = reference_median_ms(verdict);
      }
      if (reference_ms_) {
        result.candidate_ms = *reference_ms_ / speedup->get<double>();
      }
    }
    return result;
  }

  static std::optional<double> reference_median_ms(const nlohmann::json& verdict) {
    for (const auto& stage : verdict.value("stages", nlohmann::json::array())) {
      if (stage.value("name", "") == "performance") {
        const auto pointer = nlohmann::json::json_pointer("/details/reference/median_ms");
        if (stage.contains(pointer) && stage.at(pointer).is_number()) {
          return stage.at(pointer).get<double>();
        }
      }
    }
    return std::nullopt;
  }

  const OptimizeOptions& options_;
  schedule::EvalEngine engine_;
  std::optional<double> reference_ms_;
};

// The profile of one candidate source (its notes say what could not be measured), or null when it was
// not asked for or could not run at all (then kforge says why and tunes without a diagnosis).
nlohmann::json profile_of(const OptimizeOptions& options, const std::string& source, const std::string& gpu) {
  if (options.no_profile) {
    return nullptr;
  }
  auto run = profile_run_settings(options.settings, source, options.settings.device, gpu);
  run.ncu = profile::find_ncu(std::nullopt);
  run.ncu_missing = "ncu was not found ($KFORGE_NCU, PATH, /usr/local/cuda/bin)";
  try {
    return profile::to_json(profile::build_profile_report(profile::gather_profile_evidence(run)));
  } catch (const std::exception& error) {
    std::cerr << "kforge optimize: no profile (" << error.what() << "); tuning without a diagnosis\n";
    return nullptr;
  }
}

std::string bound_of(const nlohmann::json& profile) {
  if (!profile.is_object() || profile["kernels"].empty() || !profile["kernels"][0]["roofline"].is_object()) {
    return "";
  }
  return profile["kernels"][0]["roofline"].value("bound", "");
}

std::string read_candidate(const std::string& path) {
  const auto extracted = source::extract_code(source::read_text_file(path));
  if (!extracted.ok()) {
    throw std::invalid_argument(fmt::format("{}: {}", path, extracted.error));
  }
  return extracted.code->code;
}

int run_optimize(OptimizeOptions& options) {
  if (options.proposers != "tune") {
    std::cerr << "kforge optimize: only --proposers tune is built so far (the LLM proposer is not; "
                 "docs/optimize.md)\n";
    return 2;
  }
  if (!options.python.empty()) {
    options.settings.python = options.python;
  }
  std::string source;
  try {
    source = read_candidate(options.from);
  } catch (const std::exception& error) {
    std::cerr << "kforge optimize: cannot read the starting candidate: " << error.what() << "\n";
    return 2;
  }
  // The start is verified (and its device learnt) before anything is tuned.
  options.settings.candidate_text = source;
  options.settings.timing.time_budget_s = options.final_time_s;
  const auto start = verify::to_json(verify::evaluate(options.settings));
  const auto device = start["device"].value("device", std::string("cpu"));
  if (start.value("outcome", "") != "accepted") {
    std::cerr << fmt::format("kforge optimize: the starting candidate is not accepted: {}\n",
                             start.value("summary", ""));
    return start.value("outcome", "") == "rejected" ? 1 : 2;
  }
  if (device.rfind("cuda", 0) != 0) {
    std::cerr << "kforge optimize: tuning needs a GPU: on the CPU the Triton interpreter gives no timing to "
                 "compare (the start is accepted)\n";
    return 2;
  }
  options.settings.device = device;
  const auto gpu = start["device"].value("uuid", device);
  const auto search = optimize::find_knobs(source);  // it parses: the verdict pipeline accepted it
  std::unique_ptr<store::ResultStore> store;
  if (!options.no_store) {
    store = store::ResultStore::open(options.store.empty() ? store::ResultStore::default_path()
                                                           : fs::path(options.store));
  }
  const auto before = profile_of(options, source, gpu);
  options.tuner.priority = optimize::priority_for_bound(bound_of(before));
  EngineEvaluator evaluator(options, store.get());
  auto outcome = optimize::TunerOutcome{};
  const auto before_fraction = before.is_object()
                                   ? before.value("fraction_of_roofline", nlohmann::json(nullptr))
                                   : nlohmann::json(nullptr);
  if (search.knobs.empty()) {
    outcome.best_source = source;
    outcome.stop_reason = "the candidate has no knobs the tuner can rewrite";
  } else if (before_fraction.is_number() && before_fraction.get<double>() >= kNearRoofline) {
    outcome.best_source = source;
    outcome.stop_reason =
        fmt::format("its kernels already run at {:.0f}% of the roofline (tuning stops at {:.0f}%)",
                    100 * before_fraction.get<double>(), 100 * kNearRoofline);
  } else {
    outcome = optimize::tune_knobs(source, search.knobs, options.tuner, std::ref(evaluator));
  }
  const auto after = outcome.best_source == source ? before : profile_of(options, outcome.best_source, gpu);
  const fs::path out = options.out.empty()
                           ? fs::path("kforge-optimize") / options.settings.problem_path.stem()
                           : fs::path(options.out);
  std::error_code error;
  fs::create_directories(out, error);
  if (error || !(std::ofstream(out / "best.py") << outcome.best_source)) {
    std::cerr << fmt::format("kforge optimize: cannot write into {} ({}); the best source follows\n{}",
                             out.string(), error ? error.message() : "a file cannot be written",
                             outcome.best_source);
    return 2;
  }
  const auto report = optimize::optimize_report({options.settings.problem_path.string(), options.from,
                                                 start["device"], search, outcome, before, after});
  std::ofstream(out / "report.json") << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                                     << "\n";
  std::ofstream(out / "report.html") << optimize::render_report_html(report);
  std::cout << optimize::render_report_text(report);
  std::cout << fmt::format("wrote {}/best.py, report.json, report.html\n", out.string());
  return 0;
}

}  // namespace

std::function<int()> add_optimize_command(CLI::App& app) {
  auto options = std::make_shared<OptimizeOptions>();
  auto& settings = options->settings;
  auto* command = app.add_subcommand(
      "optimize",
      "Tune a verified Triton candidate: its block sizes, warps and stages, every proposal verified "
      "(docs/optimize.md)");
  command->add_option("--problem,-p", settings.problem_path, "problem file")->required();
  command->add_option("--from", options->from, "the starting candidate (class ModelNew)")->required();
  settings.candidate_path = "optimize-proposal.py";
  command->add_option("--proposers", options->proposers, "tune (the built-in tuner)")->capture_default_str();
  command->add_option("--budget", options->tuner.max_evaluations, "verdicts at most, screening included")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->add_option("--patience", options->tuner.patience, "rounds without improvement before stopping")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command->add_option("--out,-o", options->out,
                      "folder for best.py, report.json, report.html "
                      "(default kforge-optimize/<problem>)");
  command->add_option("--device,-d", settings.device, "auto (GPU if present) or cuda:N")
      ->capture_default_str();
  command->add_option("--screen-time", options->screen_time_s, "seconds of timing to screen a proposal")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--final-time", options->final_time_s, "seconds of timing for a finalist")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("--no-profile", options->no_profile, "do not profile the start and the best with ncu");
  command->add_option("--store", options->store, "result store (a rerun resumes from it)");
  command->add_flag("--no-store", options->no_store, "evaluate every proposal afresh");
  command->add_flag("--small", settings.small, "use the problem's KFORGE_SMALL sizes");
  command->add_option("--python", options->python, "Python interpreter with torch and triton");
  return [options, command]() { return command->parsed() ? run_optimize(*options) : -1; };
}

}  // namespace kforge::cli
