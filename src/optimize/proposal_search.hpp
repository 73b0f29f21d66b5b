#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kforge::optimize {

// How the time of one proposal is measured: a short screen for many, the full timing for finalists.
enum class Measurement { screening, final };

// What the verdict pipeline said of one proposed candidate.
struct ProposalResult {
  bool accepted = false;
  std::optional<double> candidate_ms;  // the measured median; absent when rejected or not timed
  std::string summary;                 // the verdict's one-line summary
};

// Runs candidate sources through the full verdict pipeline, together (one result per source, in order):
// a round's proposals share a warm judge and run side by side up to the timing.
using ProposalEvaluator = std::function<std::vector<ProposalResult>(const std::vector<std::string>& sources,
                                                                    Measurement measurement)>;

struct SearchAttempt;

// When a search stops; every proposer honours all of them.
struct SearchLimits {
  int max_evaluations = 60;       // the budget of verdicts, screening and final timings together
  int patience = 2;               // rounds without improvement before stopping
  double min_improvement = 0.02;  // a proposal must be this much faster than the best to replace it
  std::optional<std::chrono::steady_clock::time_point> deadline;  // no new round starts after it
  // Stop once the best runs this fast (optimize: 5% above the start's roofline floor), and why.
  std::optional<double> target_ms;
  std::string target_description;
  // Hears of each attempt once its verdict is in (kforge optimize prints it); may be empty.
  std::function<void(const SearchAttempt&)> on_attempt;
  // Verify only, time nothing (no GPU): the tuner verifies every proposal of its first round, the ones it
  // would screen from the start, and stops; without timings there is no best to move on from.
  bool verify_only = false;
};

// True when the limits' deadline has passed.
bool past_deadline(const SearchLimits& limits);

// Why a search stops after a round (the best at the target, the budget used, `patience` idle rounds,
// the deadline), or nothing when it goes on.
std::optional<std::string> limit_reached(const SearchLimits& limits, int evaluations_used, int idle_rounds,
                                         std::optional<double> best_ms);

// True when `best_ms` meets the limits' target.
bool target_reached(const SearchLimits& limits, std::optional<double> best_ms);

// One attempt of a search, for the report.
struct SearchAttempt {
  int round = 0;
  std::string proposer = "tune";  // tune | llm
  std::vector<long long> values;  // tune: one per knob
  std::string idea;               // llm: what the reply said it changes (its prose, shortened)
  std::string source;             // llm: the proposed source (the tuner's can be rebuilt from values)
  Measurement measurement = Measurement::screening;
  ProposalResult result;
};

// What a search found; a search that runs after another continues its rounds and its best.
struct SearchOutcome {
  std::vector<long long> best_values;  // tune: the best knob values
  std::string best_source;
  std::optional<double> baseline_ms;
  std::optional<double> best_ms;
  std::vector<SearchAttempt> attempts;
  std::vector<double> best_ms_after_round;  // index 0: the start; then one entry per round
  int evaluations = 0;                      // verdicts asked for (a reply without code costs none)
  std::string stop_reason;
};

// Appends a later search's outcome to an earlier one: the attempts and rounds follow on (the later
// search's re-measurement of its start is dropped), the start stays the earlier one's.
void append_outcome(SearchOutcome& earlier, SearchOutcome later);

}  // namespace kforge::optimize
