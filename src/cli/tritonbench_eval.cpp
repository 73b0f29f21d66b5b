#include "cli/tritonbench_eval.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/profile_settings.hpp"
#include "problem/tritonbench_checkout.hpp"
#include "profile/profile_run.hpp"
#include "report/json_lines_file.hpp"
#include "report/tritonbench_report.hpp"
#include "schedule/tritonbench_batch.hpp"
#include "source/text_file.hpp"
#include "store/result_store.hpp"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

// The device a verdict ran on ("cpu" when it names none).
std::string verdict_device(const nlohmann::json& verdict) {
  const auto device = verdict.find("device");
  return device != verdict.end() && device->is_object() ? device->value("device", std::string("cpu")) : "cpu";
}

// GPU efficiency as TritonBench defines it (the larger of bandwidth and compute utilisation), against
// this GPU's measured ceilings: the profile's time-weighted DRAM and compute fractions.
void measure_efficiency(const verify::EvalSettings& settings, report::TritonBenchRow& row) {
  const auto device = verdict_device(row.verdict);
  auto profile_settings = profile_run_settings(
      settings, settings.candidate_text.value_or(""), device,
      row.verdict["device"].is_object() ? row.verdict["device"].value("uuid", device) : device);
  profile_settings.ncu = profile::find_ncu(std::nullopt);
  if (!profile_settings.ncu) {
    row.verdict_error = "no GPU efficiency: Nsight Compute (ncu) was not found";
    return;
  }
  const auto body =
      profile::to_json(profile::build_profile_report(profile::gather_profile_evidence(profile_settings)));
  row.efficiency = report::profile_efficiency(body["kernels"]);
  if (!row.efficiency) {
    row.verdict_error = "no GPU efficiency: the profile measured no kernel of the answer";
  }
}

// The GPU efficiency of an accepted answer timed on a GPU, profiled with its verdict's problem and
// candidate on the verdict's device.
void measure_answer_efficiency(schedule::TritonBenchAnswer& answer) {
  auto& row = answer.row;
  if (!answer.verdict_settings || !row.verdict.is_object() ||
      row.verdict.value("outcome", "") != "accepted" || verdict_device(row.verdict).rfind("cuda", 0) != 0) {
    return;
  }
  auto settings = *answer.verdict_settings;
  settings.device = verdict_device(row.verdict);
  try {
    measure_efficiency(settings, row);
  } catch (const std::exception& error) {
    row.verdict_error = std::string("no GPU efficiency: ") + error.what();
  }
}

}  // namespace

void TritonBenchOptions::add_options(CLI::App& command) {
  command
      .add_option(
          "--tritonbench", checkout,
          "a TritonBench checkout: judge its items (--samples: the model's answers, JSONL or a folder "
          "of NAME.py; without: the gold files themselves) (docs/tritonbench.md)")
      ->check(CLI::ExistingDirectory)
      ->option_text("DIR");
  command.add_option("--channel", channel, "TritonBench channel: G (GitHub kernels) or T (PyTorch-aligned)")
      ->check(CLI::IsMember({"G", "T", "g", "t"}))
      ->option_text("G|T")
      ->capture_default_str();
  command.add_option("--items", items, "TritonBench: only these items (gold file stems)")
      ->delimiter(',')
      ->option_text("LIST");
  command.add_flag("--efficiency", efficiency,
                   "TritonBench: profile each accepted answer with Nsight Compute for its GPU efficiency");
}

std::string TritonBenchOptions::usage_problem() const {
  return !active() && (channel != "G" || !items.empty() || efficiency)
             ? "--channel, --items and --efficiency need --tritonbench PATH"
             : "";
}

int run_tritonbench(const TritonBenchOptions& options, const verify::EvalSettings& base,
                    const std::string& samples, bool json, const std::string& output,
                    const BatchOptions& batch) {
  problem::TritonBenchSelection selection;
  schedule::TritonBenchBatchSettings settings;
  std::unique_ptr<store::ResultStore> store;
  try {
    settings.channel = problem::parse_tritonbench_channel(options.channel);
    selection = problem::load_tritonbench(options.checkout, settings.channel, samples, options.items);
    settings.checkout = fs::absolute(options.checkout);
    settings.base = base;
    auto& scheduler = settings.scheduler;
    scheduler.devices = batch_devices(batch, base.device);
    scheduler.jobs_per_device = batch.jobs > 0 ? batch.jobs : default_jobs(scheduler.devices.size());
    scheduler.reuse_stored = !batch.fresh;
    scheduler.use_zygote = !batch.no_zygote;
    if (!batch.no_store) {
      store = store::ResultStore::open(batch.store.empty() ? store::ResultStore::default_path()
                                                           : fs::path(batch.store));
      scheduler.store = store.get();
    }
  } catch (const std::exception& error) {
    std::cerr << "kforge eval: " << error.what() << "\n";
    return 2;
  }
  for (const auto& unmatched : selection.unmatched) {
    std::cerr << "kforge eval: an answer matches no item: " << unmatched << "\n";
  }
  std::optional<report::JsonLinesFile> results;
  try {
    results.emplace(batch.results);
  } catch (const std::runtime_error& error) {
    std::cerr << "kforge eval: " << error.what() << "\n";
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<report::TritonBenchRow> rows;
  std::vector<bool> finished(selection.items.size(), false);
  std::size_t done = 0;
  schedule::TritonBenchResult result;
  const auto document = [&](const std::vector<report::TritonBenchRow>& shown) {
    // The device the verdicts ran on (the first that names one), else where the scheduler runs them.
    auto device = settings.scheduler.devices.front();
    for (const auto& row : shown) {
      if (row.verdict.is_object() && row.verdict.contains("device") && row.verdict["device"].is_object() &&
          row.verdict["device"].contains("device")) {
        device = verdict_device(row.verdict);
        break;
      }
    }
    auto report = report::tritonbench_report_json(shown, options.channel, device);
    report["unmatched"] = selection.unmatched;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report["run"] = {{"wall_s", wall},
                     {"devices", settings.scheduler.devices},
                     {"jobs_per_device", settings.scheduler.jobs_per_device},
                     {"answers_per_minute", wall > 0 ? 60.0 * static_cast<double>(shown.size()) / wall : 0.0},
                     {"programs_forked", result.programs_forked},
                     {"programs_started_fresh", result.programs_started_fresh}};
    return std::pair(report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace), device);
  };
  std::vector<report::TritonBenchRow> partial(selection.items.size());
  const auto on_row = [&](std::size_t index, const report::TritonBenchRow& row) {
    partial[index] = row;
    finished[index] = true;
    ++done;
    results->append(report::tritonbench_row_json(row));
    std::cerr << fmt::format(
        "[{}/{}] {} ({}): call {}, exec {}, {}\n", done, selection.items.size(), row.name, row.origin,
        row.call ? "yes" : "no", row.exec ? "yes" : "no",
        row.verdict.is_object() ? row.verdict.value("summary", std::string()) : row.verdict_error);
    if (!output.empty()) {  // rewritten after every answer: a run cut short keeps what it judged
      std::vector<report::TritonBenchRow> shown;
      for (std::size_t i = 0; i < partial.size(); ++i) {
        if (finished[i]) {
          shown.push_back(partial[i]);
        }
      }
      source::write_text_file(output, document(shown).first + "\n");
    }
  };
  try {
    result = schedule::judge_tritonbench(selection.items, settings, on_row);
    for (auto& answer : result.answers) {
      if (options.efficiency) {
        measure_answer_efficiency(answer);
      }
      rows.push_back(std::move(answer.row));
    }
  } catch (const std::exception& error) {
    std::cerr << "kforge eval: " << error.what() << "\n";
    return 2;
  }
  const auto [text, device] = document(rows);
  if (!output.empty()) {
    source::write_text_file(output, text + "\n");
  }
  std::cout << (json ? text + "\n" : report::render_tritonbench_report(rows, options.channel, device));
  if (!json) {
    const auto run = nlohmann::json::parse(text)["run"];
    std::cout << fmt::format(
        "throughput          {:.1f} answers/min ({:.0f} s on {}; {} programs forked from warm "
        "zygotes, {} started fresh)\n",
        run.value("answers_per_minute", 0.0), run.value("wall_s", 0.0),
        fmt::join(settings.scheduler.devices, ","), result.programs_forked, result.programs_started_fresh);
  }
  return selection.unmatched.empty() ? 0 : 1;
}

}  // namespace kforge::cli
