#include "optimize/knob_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

namespace kforge::optimize {
namespace {

using Values = std::vector<long long>;

// The knob indices in the order the settings' priority gives (stable within a kind).
std::vector<std::size_t> knob_order(const std::vector<Knob>& knobs, const std::vector<KnobKind>& priority) {
  std::vector<std::size_t> order(knobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  const auto rank = [&](KnobKind kind) {
    const auto found = std::find(priority.begin(), priority.end(), kind);
    return static_cast<std::size_t>(found - priority.begin());
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rank(knobs[a].kind) < rank(knobs[b].kind); });
  return order;
}

// A change of one knob to one value.
struct Move {
  std::size_t knob = 0;
  long long value = 0;
};

class Search {
 public:
  Search(const std::string& source, const std::vector<Knob>& knobs, const TunerSettings& settings,
         const ProposalEvaluator& evaluate)
      : source_(source), knobs_(knobs), settings_(settings), evaluate_(evaluate) {}

  SearchOutcome run() {
    Values best;
    for (const auto& knob : knobs_) {
      best.push_back(knob.value);
    }
    tried_.insert(best);
    const auto baseline = measure(0, {best}, Measurement::final).front();
    outcome_.best_values = best;
    outcome_.best_source = source_;
    if (!baseline.accepted || !baseline.candidate_ms) {
      outcome_.stop_reason =
          fmt::format("the starting candidate has no accepted timing: {}", baseline.summary);
      outcome_.evaluations = used_;
      return std::move(outcome_);
    }
    outcome_.baseline_ms = outcome_.best_ms = baseline.candidate_ms;
    outcome_.best_ms_after_round.push_back(*outcome_.best_ms);
    int idle_rounds = 0;
    std::vector<Move> good_moves;
    for (int round = 1;; ++round) {
      const auto proposals = propose(outcome_.best_values, good_moves);
      if (proposals.empty()) {
        outcome_.stop_reason = "every neighbour of the best candidate was tried";
        break;
      }
      const bool improved = run_round(round, proposals, good_moves);
      outcome_.best_ms_after_round.push_back(*outcome_.best_ms);
      idle_rounds = improved ? 0 : idle_rounds + 1;
      if (used_ >= settings_.limits.max_evaluations) {
        outcome_.stop_reason =
            fmt::format("the budget of {} evaluations is used", settings_.limits.max_evaluations);
        break;
      }
      if (idle_rounds >= settings_.limits.patience) {
        outcome_.stop_reason = fmt::format("no improvement in {} rounds", idle_rounds);
        break;
      }
      if (past_deadline(settings_.limits)) {
        outcome_.stop_reason = "the time limit is reached";
        break;
      }
    }
    outcome_.best_source = rewrite_knobs(source_, knobs_, outcome_.best_values);
    outcome_.evaluations = used_;
    return std::move(outcome_);
  }

 private:
  // Evaluates as many of the proposals as the budget allows, together; one result per proposal run.
  std::vector<ProposalResult> measure(int round, std::vector<Values> proposals, Measurement measurement) {
    const auto left = static_cast<std::size_t>(std::max(0, settings_.limits.max_evaluations - used_));
    proposals.resize(std::min(proposals.size(), left));
    std::vector<std::string> sources;
    sources.reserve(proposals.size());
    for (const auto& values : proposals) {
      sources.push_back(rewrite_knobs(source_, knobs_, values));
    }
    auto results = proposals.empty() ? std::vector<ProposalResult>{} : evaluate_(sources, measurement);
    results.resize(proposals.size(), ProposalResult{false, std::nullopt, "the evaluator returned no result"});
    used_ += static_cast<int>(proposals.size());
    for (std::size_t i = 0; i < proposals.size(); ++i) {
      outcome_.attempts.push_back(
          SearchAttempt{round, "tune", proposals[i], {}, {}, measurement, results[i]});
    }
    return results;
  }

  // Single-knob changes of the best (priority order first), then pairs of last round's good moves.
  std::vector<Values> propose(const Values& best, const std::vector<Move>& good_moves) {
    std::vector<Values> proposals;
    const auto add = [&](Values values) {
      if (tried_.insert(values).second) {
        proposals.push_back(std::move(values));
      }
    };
    for (std::size_t i = 0; i < good_moves.size(); ++i) {
      for (std::size_t j = i + 1; j < good_moves.size(); ++j) {
        if (good_moves[i].knob != good_moves[j].knob) {
          Values values = best;
          values[good_moves[i].knob] = good_moves[i].value;
          values[good_moves[j].knob] = good_moves[j].value;
          add(std::move(values));
        }
      }
    }
    for (const std::size_t knob : knob_order(knobs_, settings_.priority)) {
      const auto& choices = knobs_[knob].choices;
      const auto here = std::find(choices.begin(), choices.end(), best[knob]) - choices.begin();
      for (const std::ptrdiff_t step : {-1, 1, -2, 2}) {  // the nearest values first
        const auto index = here + step;
        if (index >= 0 && index < static_cast<std::ptrdiff_t>(choices.size())) {
          Values values = best;
          values[knob] = choices[static_cast<std::size_t>(index)];
          add(std::move(values));
        }
      }
    }
    return proposals;
  }

  // Screens the proposals, times the fastest in full; true when the best moved.
  bool run_round(int round, const std::vector<Values>& proposals, std::vector<Move>& good_moves) {
    const double best_ms = *outcome_.best_ms;
    std::vector<std::pair<double, Values>> screened;
    const Values previous_best = outcome_.best_values;
    good_moves.clear();
    const auto results = measure(round, proposals, Measurement::screening);
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& result = results[i];
      if (result.accepted && result.candidate_ms && *result.candidate_ms < best_ms) {
        screened.emplace_back(*result.candidate_ms, proposals[i]);
        for (std::size_t knob = 0; knob < proposals[i].size(); ++knob) {
          if (proposals[i][knob] != previous_best[knob]) {
            good_moves.push_back(Move{knob, proposals[i][knob]});
          }
        }
      }
    }
    std::sort(screened.begin(), screened.end());
    screened.resize(std::min(settings_.finalists, screened.size()));
    std::vector<Values> finalists;
    finalists.reserve(screened.size());
    for (auto& entry : screened) {
      finalists.push_back(std::move(entry.second));
    }
    const auto timed = measure(round, finalists, Measurement::final);
    bool improved = false;
    for (std::size_t i = 0; i < timed.size(); ++i) {
      if (timed[i].accepted && timed[i].candidate_ms &&
          *timed[i].candidate_ms < *outcome_.best_ms * (1.0 - settings_.limits.min_improvement)) {
        outcome_.best_ms = timed[i].candidate_ms;
        outcome_.best_values = finalists[i];
        improved = true;
      }
    }
    return improved;
  }

  const std::string& source_;
  const std::vector<Knob>& knobs_;
  const TunerSettings& settings_;
  const ProposalEvaluator& evaluate_;
  SearchOutcome outcome_;
  std::set<Values> tried_;
  int used_ = 0;
};

}  // namespace

SearchOutcome tune_knobs(const std::string& source, const std::vector<Knob>& knobs,
                         const TunerSettings& settings, const ProposalEvaluator& evaluate) {
  return Search(source, knobs, settings, evaluate).run();
}

std::vector<KnobKind> priority_for_bound(const std::string& bound) {
  if (bound == "memory-bound" || bound == "launch-bound") {
    return {KnobKind::block_size, KnobKind::num_warps, KnobKind::num_stages, KnobKind::group_size};
  }
  if (bound == "compute-bound") {
    return {KnobKind::block_size, KnobKind::num_stages, KnobKind::group_size, KnobKind::num_warps};
  }
  if (bound == "latency-bound") {
    return {KnobKind::num_warps, KnobKind::num_stages, KnobKind::block_size, KnobKind::group_size};
  }
  return {};
}

}  // namespace kforge::optimize
