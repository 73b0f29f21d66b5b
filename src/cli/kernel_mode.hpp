#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "problem/kernel_problem.hpp"
#include "verify/eval_settings.hpp"

namespace kforge::cli {

// The options of kernel mode (a user's Triton file as its own reference, docs/kernel-mode.md), shared
// by eval and optimize.
struct KernelModeOptions {
  std::string kernel;                   // the original Triton file
  std::string entry;                    // its wrapper function
  std::string inputs;                   // JSON inputs spec; empty: the file's own get_inputs()
  std::vector<int> writes;              // arguments the wrapper writes its outputs into
  std::map<int, std::string> keywords;  // inputs passed by name (from the problem made, not an option)
  problem::WrapperResult result = problem::WrapperResult::kUnlessNone;  // likewise
  bool inputs_from_test = false;  // capture the arguments from the file's own test block
  int test_case = -1;             // which of the test block's calls (-1: the largest)

  void add_options(CLI::App& command);
  bool active() const { return !kernel.empty(); }
  // Why the options cannot be used together with `problem` (a --problem also given), or "".
  std::string usage_problem(const std::filesystem::path& problem) const;
};

// The generated reference problem and the arguments its wrapper's outputs are written into.
struct KernelProblemFile {
  std::filesystem::path problem;
  std::vector<int> writes;       // --writes, or those inferred
  bool writes_inferred = false;  // found by comparing the arguments before and after the reference's call
  std::map<int, std::string> keywords;  // inputs the wrapper takes by name (keyword-only parameters)
  problem::WrapperResult result = problem::WrapperResult::kUnlessNone;
  std::vector<std::string> called_tests;  // the test block's uncalled test functions kforge called

  // What the verdict says about it: {"entry", "writes", "writes_inferred"}, "keywords" where any,
  // "result_ignored" where the reference returned None and "called_tests" where kforge called any.
  nlohmann::json describe(const std::string& entry) const;
};

// Generates the reference problem and writes it to a folder of the system's temporary directory named
// by its content hash (so a rerun finds its verdicts in the store). Without --writes the arguments the
// wrapper writes are inferred: from the test block's recorded call (--inputs-from-test), else from one
// call on the problem's own inputs (a probe run with the settings' seed, small sizes and overrides).
// Throws std::invalid_argument or std::runtime_error saying what is wrong. `settings.python` runs the
// capture and the probe, `settings.timeout_s` bounds each.
KernelProblemFile write_kernel_problem(const KernelModeOptions& options,
                                       const verify::EvalSettings& settings);

// A variant file's text as the candidate (the original file itself when `variant` is empty), calling the
// wrapper as the problem does: set options.writes and options.keywords to the problem's first.
std::string kernel_candidate(const KernelModeOptions& options, const std::string& variant);

// The original file's test block (kept out of the problem, put back into a drop-in file).
std::string kernel_test_block(const KernelModeOptions& options);

}  // namespace kforge::cli
