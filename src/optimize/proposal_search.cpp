#include "optimize/proposal_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

namespace kforge::optimize {

bool past_deadline(const SearchLimits& limits) {
  return limits.deadline && std::chrono::steady_clock::now() >= *limits.deadline;
}

bool target_reached(const SearchLimits& limits, std::optional<double> best_ms) {
  return limits.target_ms && best_ms && *best_ms <= *limits.target_ms;
}

std::optional<std::string> limit_reached(const SearchLimits& limits, int evaluations_used, int idle_rounds,
                                         std::optional<double> best_ms) {
  if (target_reached(limits, best_ms)) {
    return fmt::format("the best runs in {:.4g} ms, at or under the target of {:.4g} ms{}{}", *best_ms,
                       *limits.target_ms, limits.target_description.empty() ? "" : ": ",
                       limits.target_description);
  }
  if (evaluations_used >= limits.max_evaluations) {
    return fmt::format("the budget of {} evaluations is used", limits.max_evaluations);
  }
  if (idle_rounds >= limits.patience) {
    return fmt::format("no improvement in {} rounds", idle_rounds);
  }
  if (past_deadline(limits)) {
    return "the time limit is reached";
  }
  return std::nullopt;
}

void append_outcome(SearchOutcome& earlier, SearchOutcome later) {
  if (earlier.best_ms_after_round.empty()) {
    later.evaluations += earlier.evaluations;
    auto attempts = std::move(earlier.attempts);
    attempts.insert(attempts.end(), later.attempts.begin(), later.attempts.end());
    later.attempts = std::move(attempts);
    earlier = std::move(later);
    return;
  }
  const int offset = earlier.attempts.empty() ? 0 : earlier.attempts.back().round;
  for (auto& attempt : later.attempts) {
    if (attempt.round == 0) {
      continue;  // the later search timed its start again: the earlier search's best
    }
    attempt.round += offset;
    earlier.attempts.push_back(std::move(attempt));
  }
  if (later.best_ms_after_round.size() > 1) {
    earlier.best_ms_after_round.insert(earlier.best_ms_after_round.end(),
                                       std::next(later.best_ms_after_round.begin()),
                                       later.best_ms_after_round.end());
  }
  earlier.evaluations += later.evaluations;
  earlier.best_values = std::move(later.best_values);
  earlier.best_source = std::move(later.best_source);
  if (later.best_ms) {
    earlier.best_ms = later.best_ms;
  }
  earlier.stop_reason = std::move(later.stop_reason);
}

}  // namespace kforge::optimize
