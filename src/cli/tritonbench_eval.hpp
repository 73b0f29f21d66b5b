#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/batch_run.hpp"
#include "verify/eval_settings.hpp"

namespace kforge::cli {

// `kforge eval --tritonbench PATH --channel G|T [--samples ANSWERS]`: a TritonBench checkout's items,
// each answer judged as TritonBench does (call and execution accuracy against the gold test block) and
// by kforge (kernel mode: the gold wrapper is the reference on inputs captured from the test block),
// with speedup and GPU efficiency (docs/tritonbench.md).
struct TritonBenchOptions {
  std::string checkout;
  std::string channel = "G";
  std::vector<std::string> items;  // only these gold names
  bool efficiency = false;         // profile accepted answers with ncu for the GPU efficiency

  void add_options(CLI::App& command);
  bool active() const { return !checkout.empty(); }
  // Why the TritonBench-only options were given without --tritonbench, or "".
  std::string usage_problem() const;
};

// Judges every answer; prints the table (or the JSON report with `json`) and writes the JSON report to
// `output` when given. Returns 0 when every answer was judged, 1 when some answer could not be matched
// to an item, 2 for a usage error (no checkout, unknown item).
// The batch options spread the answers over the devices (--gpus, -j) and choose the result store.
int run_tritonbench(const TritonBenchOptions& options, const verify::EvalSettings& base,
                    const std::string& samples, bool json, const std::string& output,
                    const BatchOptions& batch);

}  // namespace kforge::cli
