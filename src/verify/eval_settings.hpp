#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "measure/timing_policy.hpp"
#include "rules/rule.hpp"

namespace kforge::verify {

// The least time the compile stage and the judge's start get, whatever the per-call timeout: starting
// a worker (Python, importing torch and triton) is kforge's own cost and grows with the machine's load
// and a cold file cache, so a short --timeout meant for a hanging forward must not fire there first.
inline constexpr double kMinCompileTimeoutS = 120.0;
// A candidate larger than this is rejected at the extract stage (`candidate-too-large`).
inline constexpr std::uintmax_t kMaxCandidateBytes = std::uintmax_t{16} * 1024 * 1024;

// Everything `kforge eval` needs to judge one candidate against one problem.
struct EvalSettings {
  std::filesystem::path problem_path;
  std::filesystem::path candidate_path;
  std::optional<std::string> candidate_text;  // inline candidate (e.g. an LLM completion); else the file
  std::uintmax_t max_candidate_bytes = kMaxCandidateBytes;  // larger candidates are rejected (extract)
  std::string device = "auto";                              // auto | cpu | cuda:N
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
  bool generalise = true;          // run the generalisation trial (other sizes and constructor numbers)
  std::string baseline = "eager";  // what the speedup is against: eager | compile (torch.compile)
  // Time the reference in the candidate's process too, so both sides compare within one process (eager
  // baseline, GPU; --reference-beside). Off by default: it costs timing throughput and puts the problem's
  // code in the candidate's process, for a gain the fidelity benchmark did not show (docs/verdict.md).
  bool reference_beside = false;
  std::optional<std::filesystem::path> python;

  // The compile stage's calls (device set-up, importing the candidate, building ModelNew).
  double compile_timeout_s() const { return std::max(timeout_s, kMinCompileTimeoutS); }
  // The user's function that the candidate's generated ModelNew.forward calls (kernel mode, TritonBench):
  // the verdict's messages name it instead of code the user never wrote.
  std::optional<std::string> entry_point;
  // False for a problem whose code came from a client of kforge serve: its judge runs in the sandbox.
  bool problem_trusted = true;
};

}  // namespace kforge::verify
