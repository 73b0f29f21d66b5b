#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "optimize/proposal_search.hpp"
#include "optimize/tunable_knobs.hpp"

namespace kforge::optimize {

struct TunerSettings {
  SearchLimits limits;
  std::size_t finalists = 3;  // screened proposals that get the full timing each round
  // Knob kinds to try first (from the profile's diagnosis); the others follow.
  std::vector<KnobKind> priority;
};

// Successive halving over the knobs, one round at a time: every change of one knob of the current best
// by one or two steps along its choices is screened, the fastest accepted few are timed in full, and the
// fastest of those that beats the best by min_improvement becomes the new best; in the next round its
// neighbours are tried, and the best changes of the round are also tried together. For a kernel calling
// tl.dot with M and N tile knobs, round 1 also screens a few known-good matmul tile configurations.
// Stops on the budget, after `patience` rounds without improvement, or at the deadline. Rejected
// proposals are kept in the attempts with their reason.
SearchOutcome tune_knobs(const std::string& source, const std::vector<Knob>& knobs,
                         const TunerSettings& settings, const ProposalEvaluator& evaluate);

// The knob kinds that matter most for a kernel of this bound ("memory-bound", "compute-bound",
// "latency-bound", "launch-bound"; anything else: no preference).
std::vector<KnobKind> priority_for_bound(const std::string& bound);

}  // namespace kforge::optimize
