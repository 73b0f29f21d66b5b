#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "measure/timing_policy.hpp"
#include "rules/rule.hpp"

namespace kforge::verify {

// Everything `kforge eval` needs to judge one candidate against one problem.
struct EvalSettings {
  std::filesystem::path problem_path;
  std::filesystem::path candidate_path;
  std::optional<std::string> candidate_text;  // inline candidate (e.g. an LLM completion); else the file
  std::string device = "auto";                // auto | cpu | cuda:N
  int trials = 5;
  std::uint64_t seed = 42;
  std::optional<double> atol;
  std::optional<double> rtol;
  bool small = false;                        // apply the problem's KFORGE_SMALL sizes
  std::map<std::string, std::string> sizes;  // NAME=VALUE overrides of module-level constants
  double timeout_s = 300.0;  // the upper bound of every call into a worker (limits: verify/call_deadlines)
  // Each call's limit derived from the reference's own time (kforge serve: a hang costs seconds); false:
  // every call gets timeout_s (kforge eval, bench, optimize).
  bool derived_call_limits = false;
  bool measure_performance = true;
  measure::TimingPolicyConfig timing;
  rules::Profile profile = rules::Profile::strict;
  std::string baseline = "eager";  // what the speedup is against: eager | compile (torch.compile)
  std::optional<std::filesystem::path> python;
  // False for a problem whose code came from a client of kforge serve: its judge runs in the sandbox.
  bool problem_trusted = true;
};

}  // namespace kforge::verify
