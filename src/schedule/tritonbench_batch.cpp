#include "schedule/tritonbench_batch.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "measure/elapsed.hpp"
#include "problem/kernel_problem.hpp"
#include "runner/gpu_gate.hpp"
#include "runner/program_runner.hpp"
#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_launch.hpp"
#include "schedule/eval_engine.hpp"
#include "source/text_file.hpp"

namespace kforge::schedule {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kSeparator(146, '#');  // TritonBench's separator line

using measure::seconds_since;

// The gold file's own run, once per item: its test values and stdout, and the reference problem kforge's
// verdict is made against (or why there is none).
struct GoldPass {
  bool ok = false;
  std::string error;  // why the gold's own test block fails
  std::string stdout_text;
  fs::path values;
  std::string entry;
  fs::path problem;
  std::vector<int> writes;
  bool writes_inferred = false;
  std::map<int, std::string> keywords;  // inputs the wrapper takes by name
  problem::WrapperResult result = problem::WrapperResult::kUnlessNone;
  std::string problem_error;  // why no reference problem could be made
  // Test functions the gold's test block defines and never calls: kforge called them for the capture.
  std::vector<std::string> called_tests;
  // The gold's test block failed with kforge's poisoned allocations and passed without: it reads memory
  // it never wrote. Its answers are then run unpoisoned too; this is how the poisoned run failed.
  std::optional<std::string> reads_unwritten;
  // The gold's values from a second run whose uninitialized allocations held another value: where they
  // differ from `values`, the gold left the element undefined (tritonbench_compare --gold-second).
  std::optional<fs::path> second_values;
  double seconds = 0.0;
};

struct GoldSlot {
  std::mutex mutex;  // held while the gold runs: an item's other answers wait for it
  std::optional<GoldPass> pass;
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

// Everything the answers share: the settings, the devices' program runners, the engine, the golds.
class TritonBenchBatch {
 public:
  TritonBenchBatch(const std::vector<problem::TritonBenchItem>& items,
                   const TritonBenchBatchSettings& settings, const TritonBenchRowCallback& on_row)
      : items_(items),
        settings_(settings),
        on_row_(on_row),
        python_(runner::find_python_environment(settings.base.python)),
        scratch_(runner::ScratchSpace::create()),
        answers_(items.size()) {
    auto scheduler = settings.scheduler;
    scheduler.python = python_.interpreter;
    scheduler.on_result = nullptr;
    engine_ = std::make_unique<EvalEngine>(scheduler);
    for (const auto& device : scheduler.devices) {
      runners_.push_back(std::make_unique<runner::ProgramRunner>(python_, device, scheduler.use_zygote));
    }
  }

  TritonBenchResult run() {
    std::vector<std::thread> threads;
    for (const auto& runner : runners_) {
      for (std::size_t i = 0; i < settings_.scheduler.jobs_per_device; ++i) {
        threads.emplace_back([this, device = runner.get()] { work(*device); });
      }
    }
    for (auto& thread : threads) {
      thread.join();
    }
    engine_->wait_idle();
    TritonBenchResult result{answers_, 0, 0};
    for (const auto& runner : runners_) {
      result.programs_forked += runner->forked();
      result.programs_started_fresh += runner->started_fresh();
    }
    return result;
  }

 private:
  void work(runner::ProgramRunner& runner) {
    for (auto index = next_.fetch_add(1); index < items_.size(); index = next_.fetch_add(1)) {
      prepare(index, runner);
    }
  }

  // An answer's programs; then its verdict is submitted to the engine (or the row is finished here).
  void prepare(std::size_t index, runner::ProgramRunner& runner) {
    const auto& item = items_[index];
    auto& row = answers_[index].row;
    row.name = item.name;
    row.origin = item.origin;
    std::optional<EvalJob> job;
    try {
      const auto& gold = gold_pass(item, runner, row);
      if (gold.reads_unwritten) {
        row.notes.push_back(fmt::format(
            "the gold's test block reads memory it never wrote (torch.empty): with kforge's poisoned "
            "allocations it fails ({}), so it and this answer ran without poisoning; its values depend on "
            "what that memory held",
            *gold.reads_unwritten));
      }
      if (!gold.called_tests.empty()) {
        row.notes.push_back(fmt::format(
            "the gold's test block defines {} and never calls it: kforge called it to capture the "
            "wrapper's inputs (TritonBench's own scripts compare the stdout of the file as it is)",
            fmt::join(gold.called_tests, ", ")));
      }
      const auto code = call_answer(index, item, gold, runner, row);
      job = verdict_job(index, item, gold, code, row);
    } catch (const std::exception& error) {
      row.verdict_error = error.what();
    }
    if (!job) {
      finish(index);
      return;
    }
    answers_[index].verdict_settings = job->settings;
    engine_->submit({std::move(*job)}, [this, index](const EvalOutcome& outcome) {
      answers_[index].row.verdict = outcome.verdict;
      answers_[index].row.seconds["verdict"] = outcome.seconds;
      report::hold_to_the_test_block(answers_[index].row);
      finish(index);
    });
  }

  void finish(std::size_t index) {
    const std::lock_guard lock(rows_mutex_);
    if (on_row_) {
      on_row_(index, answers_[index].row);
    }
  }

  // The gold file's run with its wrapper recorded (tritonbench_run --capture), once per item.
  const GoldPass& gold_pass(const problem::TritonBenchItem& item, runner::ProgramRunner& runner,
                            report::TritonBenchRow& row) {
    std::shared_ptr<GoldSlot> slot;
    {
      const std::lock_guard lock(golds_mutex_);
      auto& found = golds_[item.name];
      found = found ? found : std::make_shared<GoldSlot>();
      slot = found;
    }
    const std::lock_guard lock(slot->mutex);
    if (!slot->pass) {
      slot->pass = run_gold(item, runner);
      row.seconds["gold"] = slot->pass->seconds;  // the first answer of the item pays for it
    }
    return *slot->pass;
  }

  GoldPass run_gold(const problem::TritonBenchItem& item, runner::ProgramRunner& runner) {
    const auto start = Clock::now();
    const auto folder = scratch_.directory() / "gold" / item.name;
    const auto module_folder = folder / "tritonbench_run";
    fs::create_directories(module_folder);
    auto arguments = run_arguments(fs::absolute(item.gold_file), module_folder);
    arguments.emplace_back("--capture");
    const auto run = [&] {
      return run_holding_gate(runner, [&](runner::ProgramPause* pause) {
        return runner.run_trusted("tritonbench_run", folder, arguments, module_folder / "result.json",
                                  settings_.base.timeout_s, pause);
      });
    };
    auto result = run();
    GoldPass gold;
    const bool machine_lacks = result.answer && result.answer->value("stage", "") == "environment";
    if (result.answer && !result.answer->value("ok", false) && !machine_lacks) {  // poison-sensitive?
      const auto poisoned_failure = failure_text(result);
      arguments.emplace_back("--no-poison");
      auto unpoisoned = run();
      if (unpoisoned.answer && unpoisoned.answer->value("ok", false)) {
        gold.reads_unwritten = poisoned_failure;
        result = std::move(unpoisoned);
      }
    }
    gold.ok = result.answer && result.answer->value("ok", false);
    const auto* why = machine_lacks ? "the gold's test block cannot run on this machine: "
                                    : "the gold file's own test block fails: ";
    gold.error = gold.ok ? "" : why + failure_text(result);
    gold.stdout_text = gold.ok ? result.answer->value("stdout", "") : "";
    gold.values = module_folder / "values.pt";
    // Only answers are compared with the gold's values: a gold answering itself needs no second run.
    if (gold.ok && item.prediction && !gold.reads_unwritten &&
        result.answer->value("may_hold_poison", false)) {
      gold.second_values = second_poison_values(item, runner, folder);
    }
    if (gold.ok) {
      make_gold_problem(item, *result.answer, gold);
    } else {
      gold.problem_error = gold.error;
    }
    gold.seconds = seconds_since(start);
    return gold;
  }

  // The gold's values run again with a second poison, or nullopt when that run fails (its elements are
  // then all compared, as before the second run existed).
  std::optional<fs::path> second_poison_values(const problem::TritonBenchItem& item,
                                               runner::ProgramRunner& runner, const fs::path& folder) {
    const auto module_folder = folder / "second_poison";
    fs::create_directories(module_folder);
    auto arguments = run_arguments(fs::absolute(item.gold_file), module_folder);
    arguments.emplace_back("--second-poison");
    const auto result = run_holding_gate(runner, [&](runner::ProgramPause* pause) {
      return runner.run_trusted("tritonbench_run", folder, arguments, module_folder / "result.json",
                                settings_.base.timeout_s, pause);
    });
    if (!result.answer || !result.answer->value("ok", false)) {
      return std::nullopt;
    }
    return module_folder / "values.pt";
  }

  // The reference problem from the gold run's capture: the wrapper, its inputs and what it writes.
  void make_gold_problem(const problem::TritonBenchItem& item, const nlohmann::json& answer, GoldPass& gold) {
    if (!answer.contains("capture")) {
      const auto error = answer.value("capture_error", nlohmann::json::object());
      gold.problem_error = fmt::format("the test block capture ({}): {}", error.value("stage", "internal"),
                                       error.value("error", "no capture"));
      return;
    }
    const auto& capture = answer["capture"];
    try {
      gold.entry = capture.value("entry", "");
      gold.called_tests = capture.value("called_tests", std::vector<std::string>{});
      problem::ObservedCall call;
      call.writes = capture.value("writes", std::vector<int>{});
      call.returns_none = capture.value("returns_none", false);
      gold.writes = problem::inferred_writes(call, gold.entry, "the gold test block's call");
      gold.writes_inferred = !gold.writes.empty();
      gold.keywords = problem::spec_keywords(capture["spec"].dump());
      gold.result = problem::observed_result(call);
      const auto text = problem::kernel_problem_text(
          {item.gold_file, gold.entry, std::nullopt, gold.writes, capture["spec"].dump(2), gold.result});
      const auto folder = scratch_.directory() / "problems";
      fs::create_directories(folder);
      gold.problem = folder / (item.name + ".py");
      source::write_text_file(gold.problem, text);
    } catch (const std::exception& error) {
      gold.problem_error = error.what();
    }
  }

  // TritonBench's call and execution accuracy of one answer. Returns the code kforge judges: what the
  // answer ran with (after TritonBench-G's filter), or its code as given when it did not run.
  std::string call_answer(std::size_t index, const problem::TritonBenchItem& item, const GoldPass& gold,
                          runner::ProgramRunner& runner, report::TritonBenchRow& row) {
    const auto parts = problem::split_test_block(source::read_text_file(item.gold_file));
    if (parts.test_block.empty()) {  // nothing to call: the answer would pass vacuously
      row.call_error = "the gold file has no test block (a line of '#' characters, then the test)";
      return item.prediction.value_or(parts.code);
    }
    if (!item.prediction) {  // the gold answers itself: its own run is the call
      row.call = row.exec = gold.ok;
      row.call_error = row.exec_reason = gold.error;
      return parts.code;
    }
    const auto start = Clock::now();
    const auto& code = *item.prediction;
    const auto scratch = runner.untrusted_scratch();
    const auto& folder = scratch.scratch.directory();
    const auto code_folder = folder / runner::kCandidateCodeFolder;
    const auto module_folder = folder / "tritonbench_run";
    fs::create_directories(code_folder);
    fs::create_directories(module_folder);
    const auto file = code_folder / (item.name + ".py");
    source::write_text_file(
        file, code + "\n" + kSeparator + "\n" + parts.test_block.substr(parts.test_block.find('\n') + 1));
    auto arguments = run_arguments(file, module_folder);
    if (settings_.channel == problem::TritonBenchChannel::G) {
      arguments.emplace_back("--keep-imports-and-functions");
    }
    if (gold.reads_unwritten) {  // run as the gold had to be
      arguments.emplace_back("--no-poison");
    }
    const runner::CandidateSandboxContext context{
        {}, settings_.base.timeout_s, {item.gold_file, settings_.checkout}, {}};
    const auto result = run_holding_gate(runner, [&](runner::ProgramPause* pause) {
      return runner.run_untrusted("tritonbench_run", scratch, arguments, context,
                                  module_folder / "result.json", settings_.base.timeout_s, pause);
    });
    row.seconds["call"] = seconds_since(start);
    row.call = result.answer && result.answer->value("ok", false) && result.ended.exit_code == 0;
    row.call_error = row.call ? "" : failure_text(result);
    if (!row.call) {
      return code;
    }
    compare_values(index, gold, result, module_folder / "values.pt", runner, row);
    return result.answer->value("code", code);
  }

  void compare_values(std::size_t index, const GoldPass& gold, const runner::ProgramRun& call,
                      const fs::path& values, runner::ProgramRunner& runner, report::TritonBenchRow& row) {
    if (!gold.ok) {
      row.exec_reason = gold.error;
      return;
    }
    if (call.answer->value("stdout", "") != gold.stdout_text) {
      row.exec_reason = "its test block printed something else than the gold's";
      return;
    }
    const auto start = Clock::now();
    const auto folder = scratch_.directory() / "answers" / std::to_string(index);
    fs::create_directories(folder);
    std::vector<std::string> arguments{"--gold",  gold.values.string(),
                                       "--model", values.string(),
                                       "--out",   (folder / "compare.json").string()};
    if (gold.second_values) {
      arguments.insert(arguments.end(), {"--gold-second", gold.second_values->string()});
    }
    const auto compared = runner.run_trusted("tritonbench_compare", folder, arguments,
                                             folder / "compare.json", settings_.base.timeout_s);
    row.seconds["compare"] = seconds_since(start);
    const auto undefined = compared.answer ? compared.answer->value("undefined_elements", 0L) : 0L;
    if (undefined > 0) {
      row.notes.push_back(
          fmt::format("{} element(s) the gold's test block leaves undefined (memory it "
                      "allocates uninitialized and never writes) were not compared",
                      undefined));
    }
    row.exec = compared.answer && compared.answer->value("match", false);
    row.exec_reason = row.exec ? ""
                      : compared.answer
                          ? compared.answer->value("reason", compared.answer->value("error", ""))
                          : failure_text(compared);
  }

  // kforge's verdict as an engine job: kernel mode against the gold wrapper.
  std::optional<EvalJob> verdict_job(std::size_t index, const problem::TritonBenchItem& item,
                                     const GoldPass& gold, const std::string& code,
                                     report::TritonBenchRow& row) {
    row.entry = gold.entry;
    row.writes = gold.writes;
    row.writes_inferred = gold.writes_inferred;
    if (!gold.problem_error.empty()) {
      row.verdict_error = gold.problem_error;
      return std::nullopt;
    }
    EvalJob job;
    job.index = index;
    job.problem = item.name;
    job.settings = settings_.base;
    job.settings.problem_path = gold.problem;
    job.settings.candidate_path = item.origin;
    job.settings.candidate_text =
        problem::kernel_candidate_text(code, gold.entry, gold.writes, gold.keywords, gold.result);
    job.settings.entry_point = gold.entry;  // messages name the wrapper the answer wrote
    return job;
  }

  // A program on a GPU holds the engine's gate shared: it never runs while the engine times (it is
  // stopped then, not waited for: a test block may take minutes).
  template <typename Run>
  runner::ProgramRun run_holding_gate(runner::ProgramRunner& runner, const Run& run) {
    runner::ProgramPause pause;
    const runner::GpuGate::SharedUse use(engine_->gate(runner.device()), &pause);
    return run(&pause);
  }

  const std::vector<problem::TritonBenchItem>& items_;
  const TritonBenchBatchSettings& settings_;
  const TritonBenchRowCallback& on_row_;
  runner::PythonEnvironment python_;
  runner::ScratchSpace scratch_;
  std::vector<TritonBenchAnswer> answers_;
  std::mutex rows_mutex_;
  std::mutex golds_mutex_;
  std::map<std::string, std::shared_ptr<GoldSlot>> golds_;
  std::atomic<std::size_t> next_{0};
  std::vector<std::unique_ptr<runner::ProgramRunner>> runners_;
  std::unique_ptr<EvalEngine> engine_;  // last: finishes its jobs (whose callbacks use the rows) first
};

}  // namespace

TritonBenchResult judge_tritonbench(const std::vector<problem::TritonBenchItem>& items,
                                    const TritonBenchBatchSettings& settings,
                                    const TritonBenchRowCallback& on_row) {
  return TritonBenchBatch(items, settings, on_row).run();
}

}  // namespace kforge::schedule
