#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "problem/tritonbench_checkout.hpp"
#include "report/tritonbench_report.hpp"
#include "schedule/eval_scheduler.hpp"
#include "verify/eval_settings.hpp"

namespace kforge::schedule {

// How a TritonBench checkout's answers are judged (docs/tritonbench.md).
struct TritonBenchBatchSettings {
  problem::TritonBenchChannel channel = problem::TritonBenchChannel::G;
  std::filesystem::path checkout;
  verify::EvalSettings base;   // every verdict's settings; the problem and the candidate are set per answer
  SchedulerOptions scheduler;  // devices, evaluations in flight per device, store, zygotes
};

// One judged answer: its row and the settings its verdict was made with (none when no verdict was
// attempted), from which a profile of the answer can be made.
struct TritonBenchAnswer {
  report::TritonBenchRow row;
  std::optional<verify::EvalSettings> verdict_settings;
};

// Every answer, in the items' order, and how the programs started: forked from a warm zygote, or fresh.
struct TritonBenchResult {
  std::vector<TritonBenchAnswer> answers;
  std::size_t programs_forked = 0;
  std::size_t programs_started_fresh = 0;
};

// Called once per answer as it is finished (serialised), with its index in the items.
using TritonBenchRowCallback = std::function<void(std::size_t, const report::TritonBenchRow&)>;

// Judges every answer, all of them in flight at once over the devices:
//  - the gold file runs once per item (outside the sandbox) with its wrapper recorded, which gives the gold
//    test values and stdout, kforge's inputs spec and the arguments the wrapper writes;
//  - each model answer runs with the gold test block in the candidate's sandbox (call accuracy) and its
//    values are compared with the gold's (execution accuracy); a gold answer is its own run;
//  - kforge's verdict (kernel mode against the gold wrapper) goes through the batch engine (EvalEngine):
//    judges, the candidate zygote, the GPU gate and the store shared with every other answer.
// The programs are forked from warm zygotes per device (runner::ProgramRunner) and hold the device's GPU
// gate while they run, so they never overlap timing.
TritonBenchResult judge_tritonbench(const std::vector<problem::TritonBenchItem>& items,
                                    const TritonBenchBatchSettings& settings,
                                    const TritonBenchRowCallback& on_row);

}  // namespace kforge::schedule
