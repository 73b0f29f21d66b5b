#include "cli/batch_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "report/batch_metrics.hpp"
#include "report/json_lines_file.hpp"
#include "report/progress_display.hpp"
#include "reward/reward_formulas.hpp"
#include "runner/environment_probe.hpp"
#include "runner/environment_variable.hpp"
#include "schedule/eval_scheduler.hpp"
#include "verify/interpreter_sizes.hpp"
#include "verify/verdict.hpp"

namespace kforge::cli {
namespace {

constexpr std::size_t kMaxJobsPerDevice = 16;

nlohmann::json result_line(const schedule::EvalOutcome& outcome,
                           const std::optional<reward::RewardSpec>& spec) {
  const auto& verdict = outcome.verdict;
  nlohmann::json line = outcome.tags;
  line.update({{"index", outcome.index},
               {"problem", outcome.problem},
               {"outcome", verdict.value("outcome", "error")},
               {"failed_stage", verdict.value("failed_stage", nlohmann::json(nullptr))},
               {"summary", verdict.value("summary", "")},
               {"speedup", verdict.value("speedup", nlohmann::json(nullptr))},
               {"device", outcome.device},
               {"from_store", outcome.from_store},
               {"attempts", outcome.attempts},
               {"seconds", outcome.seconds},
               {"verdict", verdict}});
  const auto metrics = report::sample_result(outcome.problem, verdict);
  line["compiled"] = metrics.compiled;
  line["correct"] = metrics.correct;
  attach_reward(line, verdict, spec);
  return line;
}

// A sample that names no usable problem or candidate still gets a result line: an input error.
schedule::EvalOutcome unusable_sample(const problem::Sample& sample) {
  return {sample.index, sample.problem, sample.tags, verify::error_verdict_json({"input", *sample.error}),
          "",           false,          0,           0.0};
}

}  // namespace

std::size_t default_jobs(std::size_t devices) {
  const std::size_t cores = std::max(1U, std::thread::hardware_concurrency());
  return std::clamp<std::size_t>(cores / std::max<std::size_t>(devices, 1), 1, kMaxJobsPerDevice);
}

void add_batch_options(CLI::App& command, BatchOptions& options) {
  command
      .add_option("--gpus", options.gpus, "spread the batch over these GPUs, e.g. 0,1 (default: --device)")
      ->option_text("LIST");
  command
      .add_option("--jobs,-j", options.jobs,
                  "evaluations in flight per device (default: cores per device, at most 16)")
      ->check(CLI::Range(std::size_t{1}, kMaxJobsPerDevice * 4))
      ->option_text("N");
  command.add_option("--results", options.results, "JSON Lines file of per-sample results")
      ->option_text("FILE")
      ->capture_default_str();
  command
      .add_option("--store", options.store,
                  "result store (SQLite); default $KFORGE_STORE or ~/.cache/kforge/results.sqlite")
      ->option_text("FILE");
  command.add_flag("--no-store", options.no_store, "neither read nor write the result store");
  command.add_flag("--fresh", options.fresh, "evaluate again even when the store holds a verdict");
  command
      .add_option("--reward", options.reward,
                  "add a reward to each result: kforge, autotriton, tritonrl, drkernel, or a JSON spec "
                  "such as '{\"formula\": \"weighted\", \"weights\": {\"correct\": 1}}' (docs/rewards.md)")
      ->option_text("SPEC");
  command.add_flag(
      "--no-zygote", options.no_zygote,
      "start each candidate as a new Python process instead of forking it from the device's zygote");
}

std::optional<reward::RewardSpec> reward_spec(const BatchOptions& options) {
  if (options.reward.empty()) {
    return std::nullopt;
  }
  const bool object = options.reward.find('{') != std::string::npos;
  const auto spec =
      object ? nlohmann::json::parse(options.reward, nullptr, false) : nlohmann::json(options.reward);
  if (spec.is_discarded()) {
    throw std::invalid_argument("--reward: not valid JSON: " + options.reward);
  }
  return reward::parse_reward_spec(spec);
}

void attach_reward(nlohmann::json& document, const nlohmann::json& verdict,
                   const std::optional<reward::RewardSpec>& spec) {
  if (spec) {
    document["reward"] = reward::to_json(reward::reward_for_verdict(verdict, *spec), *spec);
  }
}

std::vector<std::string> batch_devices(const BatchOptions& options, const std::string& device) {
  std::vector<std::string> devices;
  if (!options.gpus.empty()) {
    std::stringstream list(options.gpus);
    for (std::string item; std::getline(list, item, ',');) {
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) {
        throw std::runtime_error(
            fmt::format("--gpus expects GPU indices such as 0,1; got '{}'", options.gpus));
      }
      devices.push_back("cuda:" + item);
    }
    return devices;
  }
  return {runner::resolve_device(device)};
}

std::vector<nlohmann::json> run_batch(const std::vector<problem::Sample>& samples,
                                      const verify::EvalSettings& base, const BatchOptions& options) {
  schedule::SchedulerOptions scheduler;
  scheduler.devices = batch_devices(options, base.device);
  scheduler.jobs_per_device = options.jobs > 0 ? options.jobs : default_jobs(scheduler.devices.size());
  scheduler.reuse_stored = !options.fresh;
  scheduler.use_zygote = !options.no_zygote;
  std::unique_ptr<store::ResultStore> store;
  if (!options.no_store) {
    store = store::ResultStore::open(options.store.empty() ? store::ResultStore::default_path()
                                                           : std::filesystem::path(options.store));
    scheduler.store = store.get();
  }
  report::JsonLinesFile results(options.results);
  const auto spec = reward_spec(options);
  report::ProgressDisplay progress(std::cerr, samples.size(), isatty(STDERR_FILENO) != 0);
  std::vector<nlohmann::json> lines;
  std::mutex lines_mutex;
  const auto on_result = [&](const schedule::EvalOutcome& outcome) {
    auto line = result_line(outcome, spec);
    const std::lock_guard lock(lines_mutex);
    results.append(line);
    // An input error ran nothing, but it does not come from the store either.
    progress.record(line.value("outcome", "error"),
                    outcome.from_store || (outcome.attempts == 0 && !line.contains("input_error")));
    lines.push_back(std::move(line));
  };
  scheduler.on_result = on_result;
  std::vector<schedule::EvalJob> jobs;
  const auto device = runner::resolve_device(base.device);
  std::size_t small = 0;
  for (const auto& sample : samples) {
    if (sample.error) {
      std::cerr << fmt::format("input error: {}\n", *sample.error);
      auto outcome = unusable_sample(sample);
      outcome.tags["input_error"] = *sample.error;
      on_result(outcome);
      continue;
    }
    schedule::EvalJob job;
    job.index = sample.index;
    job.problem = sample.problem;
    job.settings = base;
    job.settings.problem_path = sample.problem_path;
    if (options.small_when_interpreted) {
      verify::choose_interpreter_sizes(job.settings, device);
      small += job.settings.small ? 1U : 0U;
    }
    job.settings.candidate_path = sample.candidate_path.value_or("<inline>");
    job.settings.candidate_text = sample.candidate_text;
    job.tags = sample.tags;
    jobs.push_back(std::move(job));
  }
  std::cerr << fmt::format("batch: {} sample(s) on {}, {} at a time per device; results to {}\n", jobs.size(),
                           fmt::join(scheduler.devices, ","), scheduler.jobs_per_device, options.results);
  if (small > 0) {
    std::cerr << fmt::format(
        "no GPU: {} of {} samples run at their problem's small sizes (KFORGE_SMALL) on the Triton "
        "interpreter; --device cpu keeps the full sizes\n",
        small, jobs.size());
  }
  schedule::EvalScheduler(scheduler).run(std::move(jobs));
  progress.finish();
  std::sort(lines.begin(), lines.end(),
            [](const auto& a, const auto& b) { return a.value("index", 0UL) < b.value("index", 0UL); });
  return lines;
}

}  // namespace kforge::cli
