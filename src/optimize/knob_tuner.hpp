#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "optimize/tunable_knobs.hpp"

namespace kforge::optimize {

// How the time of one proposal is measured: a short screen for many, the full timing for finalists.
enum class Measurement { screening, final };

// What the verdict pipeline said of one rewritten candidate.
struct ProposalResult {
  bool accepted = false;
  std::optional<double> candidate_ms;  // the measured median; absent when rejected or not timed
  std::string summary;                 // the verdict's one-line summary
};

// Runs candidate sources through the full verdict pipeline, together (one result per source, in order):
// a round's proposals share a warm judge and run side by side up to the timing.
using ProposalEvaluator = std::function<std::vector<ProposalResult>(const std::vector<std::string>& sources,
                                                                    Measurement measurement)>;

// One attempt of the search, for the report.
struct TunerAttempt {
  int round = 0;
  std::vector<long long> values;  // one per knob
  Measurement measurement = Measurement::screening;
  ProposalResult result;
};

struct TunerSettings {
  int max_evaluations = 60;       // the budget, screening and final timings together
  int patience = 2;               // rounds without improvement before stopping
  double min_improvement = 0.02;  // a proposal must be this much faster than the best to replace it
  std::size_t finalists = 3;      // screened proposals that get the full timing each round
  // Knob kinds to try first (from the profile's diagnosis); the others follow.
  std::vector<KnobKind> priority;
};

struct TunerOutcome {
  std::vector<long long> best_values;
  std::string best_source;
  std::optional<double> baseline_ms;
  std::optional<double> best_ms;
  std::vector<TunerAttempt> attempts;
  std::vector<double> best_ms_after_round;  // index 0: the start; then one entry per round
  std::string stop_reason;
};

// Successive halving over the knobs, one round at a time: every change of one knob of the current best
// by one or two steps along its choices is screened, the fastest accepted few are timed in full, and the
// fastest of those that beats the best by min_improvement becomes the new best; in the next round its
// neighbours are tried, and the best changes of the round are also tried together. Stops on the budget or
// after `patience` rounds without improvement. Rejected proposals are kept in the attempts with their reason.
TunerOutcome tune_knobs(const std::string& source, const std::vector<Knob>& knobs,
                        const TunerSettings& settings, const ProposalEvaluator& evaluate);

// The knob kinds that matter most for a kernel of this bound ("memory-bound", "compute-bound",
// "latency-bound", "launch-bound"; anything else: no preference).
std::vector<KnobKind> priority_for_bound(const std::string& bound);

}  // namespace kforge::optimize
