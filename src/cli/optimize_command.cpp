#include "cli/optimize_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/common_options.hpp"
#include "cli/kernel_mode.hpp"
#include "cli/profile_settings.hpp"
#include "data/inductor_teacher.hpp"
#include "optimize/chat_endpoint.hpp"
#include "optimize/knob_tuner.hpp"
#include "optimize/llm_search.hpp"
#include "optimize/optimize_report.hpp"
#include "problem/kernel_problem.hpp"
#include "profile/profile_run.hpp"
#include "runner/environment_probe.hpp"
#include "schedule/eval_engine.hpp"
#include "source/code_extraction.hpp"
#include "source/text_file.hpp"
#include "store/result_store.hpp"
#include "verify/eval_pipeline.hpp"
#include "verify/interpreter_sizes.hpp"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

constexpr double kNearRoofline = 0.95;  // within 5% of the roofline there is nothing left to tune

struct OptimizeOptions {
  verify::EvalSettings settings;
  std::string from;
  std::vector<std::string> proposers{"tune"};
  std::string out;
  std::string python;
  std::string store;
  bool no_store = false;
  bool no_profile = false;
  bool verify_only = false;
  optimize::SearchLimits limits;
  double time_limit_s = 0;  // 0: none
  optimize::ChatEndpoint endpoint;
  int samples = 4;
  double screen_time_s = 0.5;
  double final_time_s = 2.0;
  KernelModeOptions kernel_mode;
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

// Stops the search once the forward runs within 5% of the start's roofline floor (the least time its
// measured bytes and FLOPs need); the forward's time includes launches, so this never stops early.
void set_roofline_target(const nlohmann::json& profile, optimize::SearchLimits& limits) {
  if (!profile.is_object() || !profile.contains("floor_seconds") || !profile["floor_seconds"].is_number() ||
      profile["floor_seconds"].get<double>() <= 0) {
    return;
  }
  const double floor_ms = 1000 * profile["floor_seconds"].get<double>();
  limits.target_ms = floor_ms / kNearRoofline;
  limits.target_description = fmt::format(
      "within {:.0f}% of the roofline floor ({:.4g} ms, for the start's measured bytes and FLOPs)",
      100 * (1 - kNearRoofline), floor_ms);
}

// The start: --from, or else torch.compile's Triton code for the problem made standalone (the inductor
// teacher, docs/training.md), so a problem with no candidate yet can still be optimized.
std::string starting_source(const OptimizeOptions& options) {
  if (options.kernel_mode.active()) {
    return kernel_candidate(options.kernel_mode, options.from);
  }
  if (!options.from.empty()) {
    return source::read_candidate_code(options.from);
  }
  std::cerr
      << "kforge optimize: no --from; seeding from torch.compile's Triton code (the inductor teacher)\n";
  data::InductorTeacherSettings teacher;
  teacher.device = options.settings.device;
  teacher.small = options.settings.small;
  teacher.sizes = options.settings.sizes;
  teacher.python = options.settings.python;
  const auto& problem = options.settings.problem_path;
  auto answer = data::inductor_candidate(problem, problem.stem().string(), teacher);
  if (answer.candidate.empty()) {
    throw std::runtime_error(fmt::format("the inductor teacher has none ({}: {}); give one with --from",
                                         answer.stage, answer.error));
  }
  return answer.candidate;
}

// Why these proposers cannot run as asked, or "" when they can.
std::string proposer_problem(const OptimizeOptions& options) {
  if (options.proposers.empty()) {
    return "--proposers needs at least one of tune, llm";
  }
  for (std::size_t i = 0; i < options.proposers.size(); ++i) {
    const auto& name = options.proposers[i];
    if (name != "tune" && name != "llm") {
      return fmt::format("unknown proposer '{}': expected tune, llm or both (tune,llm)", name);
    }
    if (std::find(options.proposers.begin(), options.proposers.begin() + static_cast<std::ptrdiff_t>(i),
                  name) != options.proposers.begin() + static_cast<std::ptrdiff_t>(i)) {
      return fmt::format("proposer '{}' is named twice", name);
    }
  }
  const bool llm =
      std::find(options.proposers.begin(), options.proposers.end(), "llm") != options.proposers.end();
  if (llm && (options.endpoint.url.empty() || options.endpoint.model.empty())) {
    return "--proposers llm needs --llm-url (e.g. http://127.0.0.1:8000/v1) and --model (docs/optimize.md)";
  }
  return "";
}

// The inputs every proposer shares.
struct SearchInputs {
  std::string start_source;
  nlohmann::json profile;  // of the start, or null
  optimize::KnobSearch knobs;
};

// One proposer's search from `source`, with what is left of the budget.
optimize::SearchOutcome run_proposer(const std::string& proposer, const std::string& source,
                                     const OptimizeOptions& options, const SearchInputs& inputs, int used,
                                     const optimize::ProposalEvaluator& evaluate,
                                     optimize::KnobSearch& searched_knobs) {
  auto limits = options.limits;
  limits.max_evaluations = std::max(1, options.limits.max_evaluations - used);
  limits.verify_only = options.verify_only;
  if (proposer == "tune") {
    searched_knobs = source == inputs.start_source ? inputs.knobs : optimize::find_knobs(source);
    limits.on_attempt = [knobs = searched_knobs.knobs](const optimize::SearchAttempt& attempt) {
      std::cerr << optimize::render_attempt_line(attempt, knobs) << std::flush;
    };
    if (searched_knobs.knobs.empty()) {
      optimize::SearchOutcome none;
      none.best_source = source;
      none.stop_reason = "the candidate has no knobs the tuner can rewrite";
      return none;
    }
    optimize::TunerSettings tuner{limits, 3, optimize::priority_for_bound(bound_of(inputs.profile))};
    return optimize::tune_knobs(source, searched_knobs.knobs, tuner, evaluate);
  }
  limits.on_attempt = [](const optimize::SearchAttempt& attempt) {
    std::cerr << optimize::render_attempt_line(attempt, {}) << std::flush;
  };
  const optimize::LlmContext context{source::read_text_file(options.settings.problem_path),
                                     optimize::diagnosis_text(inputs.profile)};
  const optimize::LlmSettings llm{limits, options.samples, 16};
  const auto sampler = optimize::chat_endpoint_sampler(options.endpoint, options.settings.python);
  return optimize::llm_search(source, context, llm, sampler, evaluate);
}

// A second tuner pass's attempts, whose knobs are not the report's knob table (the first pass's): their
// values are written out by name instead.
void name_values(optimize::SearchOutcome& outcome, const std::vector<optimize::Knob>& knobs) {
  for (auto& attempt : outcome.attempts) {
    if (attempt.proposer != "tune" || attempt.values.empty()) {
      continue;
    }
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < attempt.values.size() && i < knobs.size(); ++i) {
      parts.push_back(fmt::format("{}={}", knobs[i].name, attempt.values[i]));
    }
    attempt.idea = fmt::format("in the pinned autotune config: {}", fmt::join(parts, " "));
    attempt.values.clear();
  }
}

// When the tuner pinned one of a kernel's autotune configs, that config's sizes, warps and stages are
// plain literals now: a second pass tunes them from the best, with what is left of the budget.
void tune_pinned_config(const OptimizeOptions& options, const SearchInputs& inputs,
                        const optimize::ProposalEvaluator& evaluate,
                        const optimize::KnobSearch& searched_knobs, optimize::SearchOutcome& outcome) {
  bool pinned = false;
  for (std::size_t i = 0; i < searched_knobs.knobs.size() && i < outcome.best_values.size(); ++i) {
    pinned = pinned || (searched_knobs.knobs[i].kind == optimize::KnobKind::autotune_config &&
                        outcome.best_values[i] >= 0);
  }
  if (!pinned || outcome.evaluations >= options.limits.max_evaluations ||
      optimize::past_deadline(options.limits) || optimize::target_reached(options.limits, outcome.best_ms)) {
    return;
  }
  optimize::KnobSearch pinned_knobs;
  auto second =
      run_proposer("tune", outcome.best_source, options, inputs, outcome.evaluations, evaluate, pinned_knobs);
  if (pinned_knobs.knobs.empty()) {
    return;
  }
  name_values(second, pinned_knobs.knobs);
  const auto first_values = outcome.best_values;
  optimize::append_outcome(outcome, std::move(second));
  outcome.best_values = first_values;  // the knob table's values
}

// Writes each LLM attempt's source beside the report (the report names the files).
void write_attempt_files(const fs::path& out, const optimize::SearchOutcome& outcome) {
  const auto files = optimize::attempt_file_names(outcome);
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!files[i].empty()) {
      std::error_code error;
      fs::create_directories((out / files[i]).parent_path(), error);
      std::ofstream(out / files[i]) << outcome.attempts[i].source;
    }
  }
}

// True when the LLM proposer asked its endpoint and never got a reply (every one of its samples failed).
bool llm_never_answered(const optimize::SearchOutcome& outcome) {
  const auto asked = [](const optimize::SearchAttempt& attempt) {
    return attempt.proposer == "llm" && attempt.round > 0;
  };
  const auto answered = [&](const optimize::SearchAttempt& attempt) {
    return asked(attempt) && attempt.result.summary.rfind("no reply:", 0) != 0;
  };
  return std::any_of(outcome.attempts.begin(), outcome.attempts.end(), asked) &&
         std::none_of(outcome.attempts.begin(), outcome.attempts.end(), answered);
}

// Kernel mode's generated reference problem, or the --problem given; false (with the error said) when
// neither can be used.
bool choose_problem(OptimizeOptions& options) {
  auto& kernel_mode = options.kernel_mode;
  auto usage = kernel_mode.usage_problem(options.settings.problem_path);
  if (usage.empty() && !kernel_mode.active() && options.settings.problem_path.empty()) {
    usage = "give --problem FILE, or --kernel FILE --entry NAME for a Triton file that is its own reference";
  }
  if (!usage.empty()) {
    std::cerr << "kforge optimize: " << usage << "\n";
    return false;
  }
  if (kernel_mode.active()) {
    try {
      const auto made = write_kernel_problem(kernel_mode, options.settings);
      options.settings.problem_path = made.problem;
      kernel_mode.writes = made.writes;  // the candidates call the wrapper as the problem does
      kernel_mode.keywords = made.keywords;
      kernel_mode.result = made.result;
      options.settings.entry_point = kernel_mode.entry;
    } catch (const std::exception& error) {
      std::cerr << "kforge optimize: " << error.what() << "\n";
      return false;
    }
  }
  return true;
}

int run_optimize(OptimizeOptions& options) {
  if (const auto problem = proposer_problem(options); !problem.empty()) {
    std::cerr << "kforge optimize: " << problem << "\n";
    return 2;
  }
  if (!options.python.empty()) {
    options.settings.python = options.python;  // before the problem: a test block capture runs on it
  }
  if (!choose_problem(options)) {
    return 2;
  }
  if (options.time_limit_s > 0) {
    options.limits.deadline = std::chrono::steady_clock::now() +
                              std::chrono::milliseconds(static_cast<long>(options.time_limit_s * 1000));
  }
  std::string source;
  try {
    source = starting_source(options);
  } catch (const std::exception& error) {
    std::cerr << "kforge optimize: no starting candidate: " << error.what() << "\n";
    return 2;
  }
  // The start is verified (and its device learnt) before anything is tuned.
  options.settings.candidate_text = source;
  options.settings.timing.time_budget_s = options.final_time_s;
  options.settings.measure_performance = !options.verify_only;
  if (const auto note =
          verify::choose_interpreter_sizes(options.settings, runner::resolve_device(options.settings.device));
      !note.text.empty()) {
    std::cerr << note.text << "\n";
  }
  std::cerr << "kforge optimize: verifying the starting candidate\n" << std::flush;
  const auto start = verify::to_json(verify::evaluate(options.settings));
  const auto device = start["device"].value("device", std::string("cpu"));
  std::cerr << fmt::format("  the start: {}\n", start.value("summary", "")) << std::flush;
  if (start.value("outcome", "") != "accepted") {
    std::cerr << fmt::format("kforge optimize: the starting candidate is not accepted: {}\n",
                             start.value("summary", ""));
    return start.value("outcome", "") == "rejected" ? 1 : 2;
  }
  if (device.rfind("cuda", 0) != 0 && !options.verify_only) {
    std::cerr << "kforge optimize: tuning needs a GPU: on the CPU the Triton interpreter gives no timing to "
                 "compare (the start is accepted; --verify-only checks a proposer setup without timing)\n";
    return 2;
  }
  options.settings.device = device;
  if (options.verify_only) {
    options.no_profile = true;  // nothing is timed, so nothing is profiled
  }
  const auto gpu = start["device"].value("uuid", device);
  std::unique_ptr<store::ResultStore> store;
  if (!options.no_store) {
    store = store::ResultStore::open(options.store.empty() ? store::ResultStore::default_path()
                                                           : fs::path(options.store));
  }
  const SearchInputs inputs{source, profile_of(options, source, gpu), optimize::find_knobs(source)};
  const auto& before = inputs.profile;
  set_roofline_target(before, options.limits);
  EngineEvaluator evaluator(options, store.get());
  optimize::SearchOutcome outcome;
  optimize::KnobSearch searched_knobs;
  const auto before_fraction = before.is_object()
                                   ? before.value("fraction_of_roofline", nlohmann::json(nullptr))
                                   : nlohmann::json(nullptr);
  if (before_fraction.is_number() && before_fraction.get<double>() >= kNearRoofline) {
    outcome.best_source = source;
    outcome.stop_reason =
        fmt::format("its kernels already run at {:.0f}% of the roofline (tuning stops at {:.0f}%)",
                    100 * before_fraction.get<double>(), 100 * kNearRoofline);
  } else {
    for (const auto& proposer : options.proposers) {
      const auto& from = outcome.best_source.empty() ? source : outcome.best_source;
      try {
        optimize::append_outcome(outcome, run_proposer(proposer, from, options, inputs, outcome.evaluations,
                                                       std::ref(evaluator), searched_knobs));
        if (proposer == "tune") {
          tune_pinned_config(options, inputs, std::ref(evaluator), searched_knobs, outcome);
        }
      } catch (const std::exception& error) {
        std::cerr << fmt::format("kforge optimize: the {} proposer failed: {}\n", proposer, error.what());
        outcome.best_source = from;
        outcome.stop_reason = fmt::format("the {} proposer failed: {}", proposer, error.what());
      }
      if (outcome.evaluations >= options.limits.max_evaluations || optimize::past_deadline(options.limits) ||
          optimize::target_reached(options.limits, outcome.best_ms)) {
        break;
      }
    }
  }
  const auto after = outcome.best_source == source ? before : profile_of(options, outcome.best_source, gpu);
  const fs::path out = options.out.empty()
                           ? fs::path("kforge-optimize") / options.settings.problem_path.stem()
                           : fs::path(options.out);
  std::error_code error;
  fs::create_directories(out, error);
  // Kernel mode writes a drop-in file: the same entry point, the original's test block.
  const auto best =
      options.kernel_mode.active()
          ? problem::kernel_drop_in_text(outcome.best_source, kernel_test_block(options.kernel_mode))
          : outcome.best_source;
  if (error || !(std::ofstream(out / "best.py") << best)) {
    std::cerr << fmt::format("kforge optimize: cannot write into {} ({}); the best source follows\n{}",
                             out.string(), error ? error.message() : "a file cannot be written", best);
    return 2;
  }
  write_attempt_files(out, outcome);
  const auto report =
      optimize::optimize_report({options.settings.problem_path.string(), options.from, start["device"],
                                 options.proposers, searched_knobs, outcome, before, after});
  std::ofstream(out / "report.json") << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                                     << "\n";
  std::ofstream(out / "report.html") << optimize::render_report_html(report);
  std::cout << optimize::render_report_text(report);
  std::cout << fmt::format("wrote {}/best.py, report.json, report.html\n", out.string());
  if (llm_never_answered(outcome)) {
    std::cerr << fmt::format("kforge optimize: the LLM endpoint never answered: {}\n", outcome.stop_reason);
    return 2;
  }
  return 0;
}

}  // namespace

std::function<int()> add_optimize_command(CLI::App& app) {
  auto options = std::make_shared<OptimizeOptions>();
  auto& settings = options->settings;
  auto* command = app.add_subcommand(
      "optimize",
      "Make a verified Triton candidate faster: the built-in tuner and/or an LLM propose, every proposal "
      "is verified (docs/optimize.md)");
  command->add_option("--problem,-p", settings.problem_path, "problem file (or --kernel FILE --entry NAME)")
      ->option_text("FILE");
  options->kernel_mode.add_options(*command);
  command
      ->add_option("--from", options->from,
                   "the starting candidate (class ModelNew); without it, torch.compile's Triton code for "
                   "the problem made standalone (needs a GPU)")
      ->option_text("FILE");
  settings.candidate_path = "optimize-proposal.py";
  command
      ->add_option(
          "--proposers", options->proposers,
          "tune (the built-in tuner), llm (an OpenAI-compatible endpoint), or both in order: tune,llm")
      ->delimiter(',')
      ->option_text("LIST")
      ->capture_default_str();
  command->add_option("--budget", options->limits.max_evaluations, "verdicts at most, screening included")
      ->check(CLI::Range(1, 100000))
      ->option_text("N")
      ->capture_default_str();
  command->add_option("--time", options->time_limit_s, "seconds; no new round starts after them")
      ->check(CLI::PositiveNumber)
      ->option_text("SECONDS");
  command->add_option("--patience", options->limits.patience, "rounds without improvement before stopping")
      ->check(CLI::Range(1, 1000))
      ->option_text("N")
      ->capture_default_str();
  add_llm_endpoint_options(*command, options->endpoint);
  command->add_option("--samples-per-round", options->samples, "LLM replies per round, asked for in parallel")
      ->check(CLI::Range(1, 64))
      ->option_text("N")
      ->capture_default_str();
  add_deprecated_option(*command, "--samples", "--samples-per-round", options->samples)
      ->check(CLI::Range(1, 64));
  command->add_flag("--verify-only", options->verify_only,
                    "verify every proposal but time nothing (works on the CPU): checks a proposer setup");
  command
      ->add_option("--out-dir", options->out,
                   "folder for best.py, report.json, report.html (default kforge-optimize/<problem>)")
      ->option_text("DIR");
  add_deprecated_option(*command, "--out", "--out-dir", options->out);
  add_deprecated_option(*command, "-o", "--out-dir (-o names an output file in the other commands)",
                        options->out);
  add_device_option(*command, settings.device);
  command->add_option("--screen-time", options->screen_time_s, "seconds of timing to screen a proposal")
      ->check(CLI::PositiveNumber)
      ->option_text("SECONDS")
      ->capture_default_str();
  command->add_option("--final-time", options->final_time_s, "seconds of timing for a finalist")
      ->check(CLI::PositiveNumber)
      ->option_text("SECONDS")
      ->capture_default_str();
  command->add_flag("--no-profile", options->no_profile, "do not profile the start and the best with ncu");
  command->add_option("--store", options->store, "result store (a rerun resumes from it)")
      ->option_text("FILE");
  command->add_flag("--no-store", options->no_store, "evaluate every proposal afresh");
  command->add_flag("--small", settings.small, "use the problem's KFORGE_SMALL sizes");
  add_python_option(*command, options->python);
  return [options, command]() { return command->parsed() ? run_optimize(*options) : -1; };
}

}  // namespace kforge::cli
