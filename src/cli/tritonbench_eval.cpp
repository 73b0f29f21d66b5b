#include "cli/tritonbench_eval.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "cli/profile_settings.hpp"
#include "cli/test_block_capture.hpp"
#include "problem/kernel_problem.hpp"
#include "problem/tritonbench_checkout.hpp"
#include "profile/profile_run.hpp"
#include "report/tritonbench_report.hpp"
#include "runner/environment_probe.hpp"
#include "runner/program_run.hpp"
#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_launch.hpp"
#include "source/text_file.hpp"
#include "verify/eval_pipeline.hpp"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

const std::string kSeparator(146, '#');  // TritonBench's separator line

// What the gold file's own test run produced: its stdout and the values file, or why it failed.
struct GoldRun {
  bool ok = false;
  std::string stdout_text;
  fs::path values;
  std::string error;
};

// The gold's reference problem for kforge's verdict: the wrapper and the problem file, or why none.
struct GoldProblem {
  std::string entry;
  fs::path problem;
  std::string error;
};

// Per-run state: one Python, one scratch folder for the gold artefacts, each gold prepared once.
struct TritonBenchRun {
  const TritonBenchOptions& options;
  problem::TritonBenchChannel channel;
  verify::EvalSettings base;
  runner::PythonEnvironment python;
  runner::ScratchSpace scratch;
  fs::path checkout;
  bool cpu = false;
  std::map<std::string, GoldRun> gold_runs;
  std::map<std::string, GoldProblem> gold_problems;
};

std::string failure_text(const runner::ProgramRun& run) {
  if (run.answer) {
    return fmt::format("{}: {}", run.answer->value("stage", "internal"),
                       run.answer->value("error", "no result"));
  }
  return fmt::format("no result ({}){}", run.ended.message,
                     run.log_tail.empty() ? std::string() : ": " + run.log_tail);
}

std::vector<std::string> run_arguments(const fs::path& file, const fs::path& folder) {
  return {"--file",   file.string(),
          "--out",    (folder / "result.json").string(),
          "--values", (folder / "values.pt").string()};
}

const GoldRun& gold_run(TritonBenchRun& run, const problem::TritonBenchItem& item) {
  if (const auto found = run.gold_runs.find(item.name); found != run.gold_runs.end()) {
    return found->second;
  }
  const auto folder = run.scratch.directory() / "gold" / item.name;
  const auto module_folder = folder / "tritonbench_run";
  fs::create_directories(module_folder);
  const auto result = runner::run_program(
      runner::make_program_launch("tritonbench_run", run.python, folder, {},
                                  run_arguments(fs::absolute(item.gold_file), module_folder)),
      module_folder / "result.json", run.base.timeout_s);
  GoldRun gold;
  gold.ok = result.answer && result.answer->value("ok", false);
  gold.error = gold.ok ? "" : "the gold file's own test block fails: " + failure_text(result);
  gold.stdout_text = gold.ok ? result.answer->value("stdout", "") : "";
  gold.values = module_folder / "values.pt";
  return run.gold_runs.emplace(item.name, gold).first->second;
}

const GoldProblem& gold_problem(TritonBenchRun& run, const problem::TritonBenchItem& item) {
  if (const auto found = run.gold_problems.find(item.name); found != run.gold_problems.end()) {
    return found->second;
  }
  GoldProblem gold;
  try {
    const auto captured =
        capture_test_block_spec(item.gold_file, "", std::nullopt, run.python.interpreter, run.base.timeout_s);
    gold.entry = captured.entry;
    const auto text =
        problem::kernel_problem_text({item.gold_file, captured.entry, std::nullopt, {}, captured.spec});
    const auto folder = run.scratch.directory() / "problems";
    fs::create_directories(folder);
    gold.problem = folder / (item.name + ".py");
    source::write_text_file(gold.problem, text);
  } catch (const std::exception& error) {
    gold.error = error.what();
  }
  return run.gold_problems.emplace(item.name, gold).first->second;
}

// TritonBench's call: the answer's code, the separator and the gold test block, run in the sandbox.
// Returns the code kforge judges: what the answer ran with (after TritonBench-G's filter), or its code as
// given when it did not run.
std::string call_answer(TritonBenchRun& run, const problem::TritonBenchItem& item,
                        report::TritonBenchRow& row, const fs::path& folder) {
  const auto gold = problem::split_test_block(source::read_text_file(item.gold_file));
  auto code = item.prediction.value_or(gold.code);
  if (gold.test_block.empty()) {  // nothing to call: the answer would pass vacuously
    row.call_error = "the gold file has no test block (a line of '#' characters, then the test)";
    return code;
  }
  const auto code_folder = folder / runner::kCandidateCodeFolder;
  const auto module_folder = folder / "tritonbench_run";
  fs::create_directories(code_folder);
  fs::create_directories(module_folder);
  const auto file = code_folder / (item.name + ".py");
  source::write_text_file(
      file, code + "\n" + kSeparator + "\n" + gold.test_block.substr(gold.test_block.find('\n') + 1));
  auto arguments = run_arguments(file, module_folder);
  if (run.channel == problem::TritonBenchChannel::G && item.prediction) {
    arguments.emplace_back("--keep-imports-and-functions");
  }
  const runner::CandidateSandboxContext context{{}, run.base.timeout_s, {item.gold_file, run.checkout}, {}};
  const auto result =
      runner::run_program(runner::make_sandboxed_program_launch("tritonbench_run", run.python, folder,
                                                                run.cpu, arguments, context),
                          module_folder / "result.json", run.base.timeout_s);
  row.call = result.answer && result.answer->value("ok", false) && result.ended.exit_code == 0;
  row.call_error = row.call ? "" : failure_text(result);
  if (!row.call) {
    return code;
  }
  const auto& gold_result = gold_run(run, item);
  if (!gold_result.ok) {
    row.exec_reason = gold_result.error;
  } else if (result.answer->value("stdout", "") != gold_result.stdout_text) {
    row.exec_reason = "its test block printed something else than the gold's";
  } else {
    const auto compared =
        runner::run_program(runner::make_program_launch("tritonbench_compare", run.python, folder, {},
                                                        {"--gold", gold_result.values.string(), "--model",
                                                         (module_folder / "values.pt").string(), "--out",
                                                         (folder / "compare.json").string()}),
                            folder / "compare.json", run.base.timeout_s);
    row.exec = compared.answer && compared.answer->value("match", false);
    row.exec_reason = row.exec ? ""
                      : compared.answer
                          ? compared.answer->value("reason", compared.answer->value("error", ""))
                          : failure_text(compared);
  }
  return result.answer->value("code", code);
}

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

// kforge's verdict: kernel mode against the gold wrapper, inputs captured from the gold test block; then
// the efficiency of an accepted answer on a GPU when asked.
void judge_answer(TritonBenchRun& run, const problem::TritonBenchItem& item, const std::string& code,
                  report::TritonBenchRow& row) {
  const auto& gold = gold_problem(run, item);
  row.entry = gold.entry;
  if (!gold.error.empty()) {
    row.verdict_error = gold.error;
    return;
  }
  auto settings = run.base;
  settings.problem_path = gold.problem;
  settings.candidate_path = item.origin;
  settings.candidate_text = problem::kernel_candidate_text(code, gold.entry, {});
  settings.entry_point = gold.entry;
  row.verdict = verify::to_json(verify::evaluate(settings));
  if (run.options.efficiency && row.verdict.value("outcome", "") == "accepted" &&
      verdict_device(row.verdict).rfind("cuda", 0) == 0) {
    measure_efficiency(settings, row);
  }
}

report::TritonBenchRow judge_item(TritonBenchRun& run, const problem::TritonBenchItem& item) {
  report::TritonBenchRow row;
  row.name = item.name;
  row.origin = item.origin;
  try {
    const auto scratch = runner::ScratchSpace::create();
    judge_answer(run, item, call_answer(run, item, row, scratch.directory()), row);
  } catch (const std::exception& error) {
    row.verdict_error = error.what();
  }
  return row;
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
                    const std::string& samples, bool json, const std::string& output) {
  problem::TritonBenchSelection selection;
  problem::TritonBenchChannel channel{};
  try {
    channel = problem::parse_tritonbench_channel(options.channel);
    selection = problem::load_tritonbench(options.checkout, channel, samples, options.items);
  } catch (const std::exception& error) {
    std::cerr << "kforge eval: " << error.what() << "\n";
    return 2;
  }
  TritonBenchRun run{options,
                     channel,
                     base,
                     runner::find_python_environment(base.python),
                     runner::ScratchSpace::create(),
                     fs::absolute(options.checkout),
                     runner::resolve_device(base.device) == "cpu",
                     {},
                     {}};
  std::vector<report::TritonBenchRow> rows;
  const auto document = [&]() {
    // The device the verdicts ran on (the first that names one), else where --device lands.
    auto device = runner::resolve_device(base.device);
    for (const auto& row : rows) {
      if (row.verdict.is_object() && row.verdict.contains("device") && row.verdict["device"].is_object() &&
          row.verdict["device"].contains("device")) {
        device = verdict_device(row.verdict);
        break;
      }
    }
    auto report = report::tritonbench_report_json(rows, options.channel, device);
    report["unmatched"] = selection.unmatched;
    return std::pair(report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace), device);
  };
  for (const auto& unmatched : selection.unmatched) {
    std::cerr << "kforge eval: an answer matches no item: " << unmatched << "\n";
  }
  for (std::size_t i = 0; i < selection.items.size(); ++i) {
    const auto& item = selection.items[i];
    rows.push_back(judge_item(run, item));
    const auto& row = rows.back();
    std::cerr << fmt::format(
        "[{}/{}] {} ({}): call {}, exec {}, {}\n", i + 1, selection.items.size(), item.name, item.origin,
        row.call ? "yes" : "no", row.exec ? "yes" : "no",
        row.verdict.is_object() ? row.verdict.value("summary", std::string()) : row.verdict_error);
    if (!output.empty()) {  // rewritten after every answer: a run cut short keeps what it judged
      source::write_text_file(output, document().first + "\n");
    }
  }
  const auto [text, device] = document();
  if (!output.empty()) {
    source::write_text_file(output, text + "\n");
  }
  std::cout << (json ? text + "\n" : report::render_tritonbench_report(rows, options.channel, device));
  return selection.unmatched.empty() ? 0 : 1;
}

}  // namespace kforge::cli
