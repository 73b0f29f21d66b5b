#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge::reward {

// What the reward formulas read from a verdict document (verify::to_json): one flag per pipeline level.
struct VerdictFacts {
  bool evaluated = false;   // the verdict is accepted or rejected (an error is no verdict on the candidate)
  bool code_found = false;  // extract passed: code was found in the completion
  bool triton_kernel = false;   // static analysis found a @triton.jit kernel that forward launches
  bool static_passed = false;   // no static rule rejected
  bool compiled = false;        // the module imported and ModelNew was built (compile passed)
  bool correct = false;         // correctness passed
  bool runtime_passed = false;  // the runtime honesty checks passed (own kernels ran, no hidden work)
  bool accepted = false;
  std::optional<double> speedup;        // over the baseline, when timed
  std::optional<double> time_coverage;  // share of GPU time in the candidate's own kernels, when traced
  std::vector<std::string> cheating;    // rejecting findings that are attempts to cheat (rule/check ids)
};

// Reads the facts; a malformed or partial document yields facts with the missing levels false.
VerdictFacts read_verdict_facts(const nlohmann::json& verdict);

// Whether a rejecting finding with this id, in this stage, is an attempt to cheat rather than a plain
// failure (a syntax error, no kernel, a compile error, wrong numbers). Unknown ids in the static,
// runtime and performance stages count as cheating: those stages check honesty only.
bool is_cheating_finding(const std::string& stage, const std::string& rule);

}  // namespace kforge::reward
