#include "optimize/knob_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
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

// Tile configurations that serve tensor-core matmuls well (Triton's matmul tutorial configurations and
// their Hopper-sized variants): M, N and K tile, program-group size, stages, warps.
struct TileConfig {
  long long m, n, k, group, stages, warps;
};
constexpr std::array kDotTileConfigs{
    TileConfig{128, 128, 64, 8, 3, 8}, TileConfig{128, 256, 64, 8, 3, 8}, TileConfig{256, 128, 64, 8, 3, 8},
    TileConfig{128, 128, 32, 8, 4, 4}, TileConfig{128, 64, 64, 8, 4, 4},  TileConfig{64, 128, 64, 8, 4, 4},
    TileConfig{64, 64, 64, 8, 4, 4},   TileConfig{64, 256, 32, 8, 4, 4},
};

// What a knob is to a tiled matmul: its M, N or K tile (by the name's last letter), the group size,
// stages or warps; `other` for anything else.
enum class TileRole { m, n, k, group, stages, warps, other };

TileRole tile_role(const Knob& knob) {
  switch (knob.kind) {
    case KnobKind::num_warps:
      return TileRole::warps;
    case KnobKind::num_stages:
      return TileRole::stages;
    case KnobKind::group_size:
      return TileRole::group;
    case KnobKind::autotune_config:
    case KnobKind::program_order:  // the seeds keep the start's order: a batch axis must not be grouped
      return TileRole::other;
    case KnobKind::block_size:
      break;
  }
  const char last = knob.name.empty() ? ' ' : static_cast<char>(std::toupper(knob.name.back()));
  return last == 'M' ? TileRole::m : last == 'N' ? TileRole::n : last == 'K' ? TileRole::k : TileRole::other;
}

long long nearest_choice(const Knob& knob, long long wanted) {
  return *std::min_element(knob.choices.begin(), knob.choices.end(), [wanted](long long a, long long b) {
    return std::llabs(a - wanted) < std::llabs(b - wanted);
  });
}

// For a kernel that multiplies tiles with tl.dot and has M and N tile knobs: the start with its tile
// knobs set to each of the known-good configurations, so the search begins near a good tile instead of
// walking there one knob at a time (a matmul's six knobs would take several rounds of neighbours).
std::vector<Values> dot_tile_seeds(const std::string& source, const std::vector<Knob>& knobs,
                                   const Values& start) {
  const auto has = [&](TileRole role) {
    return std::any_of(knobs.begin(), knobs.end(),
                       [role](const Knob& knob) { return tile_role(knob) == role; });
  };
  if (source.find("tl.dot(") == std::string::npos || !has(TileRole::m) || !has(TileRole::n)) {
    return {};
  }
  std::vector<Values> seeds;
  seeds.reserve(kDotTileConfigs.size());
  for (const auto& config : kDotTileConfigs) {
    Values values = start;
    const std::array<long long, 6> by_role{config.m,     config.n,      config.k,
                                           config.group, config.stages, config.warps};
    for (std::size_t i = 0; i < knobs.size(); ++i) {
      const auto role = tile_role(knobs[i]);
      if (role != TileRole::other) {
        values[i] = nearest_choice(knobs[i], by_role.at(static_cast<std::size_t>(role)));
      }
    }
    seeds.push_back(std::move(values));
  }
  return seeds;
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
    seeds_ = dot_tile_seeds(source_, knobs_, best);
    const auto baseline = measure(0, {best}, Measurement::final).front();
    outcome_.best_values = best;
    outcome_.best_source = source_;
    if (settings_.limits.verify_only && baseline.accepted) {
      return verify_first_round();
    }
    if (!baseline.accepted || !baseline.candidate_ms) {
      outcome_.stop_reason =
          fmt::format("the starting candidate has no accepted timing: {}", baseline.summary);
      outcome_.evaluations = used_;
      return std::move(outcome_);
    }
    outcome_.baseline_ms = outcome_.best_ms = baseline.candidate_ms;
    outcome_.best_ms_after_round.push_back(*outcome_.best_ms);
    if (auto reason = limit_reached(settings_.limits, used_, 0, outcome_.best_ms)) {
      outcome_.stop_reason = std::move(*reason);  // the start used the budget or met the target
      outcome_.evaluations = used_;
      return std::move(outcome_);
    }
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
      if (auto reason = limit_reached(settings_.limits, used_, idle_rounds, outcome_.best_ms)) {
        outcome_.stop_reason = std::move(*reason);
        break;
      }
    }
    outcome_.best_source = rewrite_knobs(source_, knobs_, outcome_.best_values);
    outcome_.evaluations = used_;
    return std::move(outcome_);
  }

 private:
  // Without timings: every proposal the first round would screen, verified; the best stays the start.
  SearchOutcome verify_first_round() {
    const auto proposals = propose(outcome_.best_values, {});
    const auto results = measure(1, proposals, Measurement::screening);
    const auto accepted = std::count_if(results.begin(), results.end(),
                                        [](const ProposalResult& result) { return result.accepted; });
    outcome_.stop_reason = fmt::format(
        "verify-only: {} of the first round's {} proposals verified, {} accepted; nothing was timed, so the "
        "start stays the best",
        results.size(), proposals.size(), accepted);
    outcome_.evaluations = used_;
    return std::move(outcome_);
  }

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
      if (settings_.limits.on_attempt) {
        settings_.limits.on_attempt(outcome_.attempts.back());
      }
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
    for (auto& seed : seeds_) {  // first round only: the known-good tiles come before the neighbours
      add(std::move(seed));
    }
    seeds_.clear();
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
      // Configs have no order, and a value computed at run time no place among the literals: from
      // either, every choice is a neighbour.
      if (knobs_[knob].kind == KnobKind::autotune_config ||
          (knobs_[knob].site == KnobSite::run_time && best[knob] == kRunTimeValue)) {
        for (const long long choice : choices) {
          Values values = best;
          values[knob] = choice;
          add(std::move(values));
        }
        continue;
      }
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
    // The screening leaves room in the budget for the round's finalists to be timed in full.
    const auto left = static_cast<std::size_t>(std::max(0, settings_.limits.max_evaluations - used_));
    const auto screen_limit =
        left > settings_.finalists ? left - settings_.finalists : std::max<std::size_t>(1, left / 2);
    std::vector<Values> screened_proposals(
        proposals.begin(),
        proposals.begin() + static_cast<std::ptrdiff_t>(std::min(screen_limit, proposals.size())));
    for (auto unscreened = proposals.begin() + static_cast<std::ptrdiff_t>(screened_proposals.size());
         unscreened != proposals.end(); ++unscreened) {
      tried_.erase(*unscreened);  // may come back in a later round
    }
    const auto results = measure(round, screened_proposals, Measurement::screening);
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& result = results[i];
      if (result.accepted && result.candidate_ms &&
          *result.candidate_ms < best_ms * tolerance(screened_proposals[i])) {
        screened.emplace_back(*result.candidate_ms, screened_proposals[i]);
        for (std::size_t knob = 0; knob < screened_proposals[i].size(); ++knob) {
          if (screened_proposals[i][knob] != previous_best[knob]) {
            good_moves.push_back(Move{knob, screened_proposals[i][knob]});
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
      const bool faster =
          timed[i].candidate_ms &&
          *timed[i].candidate_ms < *outcome_.best_ms * (1.0 - settings_.limits.min_improvement);
      const bool as_fast_pinned = timed[i].candidate_ms && pins_a_config(finalists[i]) &&
                                  *timed[i].candidate_ms <= *outcome_.best_ms * tolerance(finalists[i]);
      if (timed[i].accepted && (faster || as_fast_pinned)) {
        outcome_.best_ms = timed[i].candidate_ms;
        outcome_.best_values = finalists[i];
        improved = true;
      }
    }
    return improved;
  }

  // True when `values` pin an autotune config the best leaves to the autotuner.
  bool pins_a_config(const Values& values) const {
    for (std::size_t knob = 0; knob < knobs_.size(); ++knob) {
      if (knobs_[knob].kind == KnobKind::autotune_config && outcome_.best_values[knob] < 0 &&
          values[knob] >= 0) {
        return true;
      }
    }
    return false;
  }

  // How much slower than the best a proposal may be and still go on: a pinned config as fast as the
  // autotuner's own pick (within the minimum improvement) replaces it, since its values can then be tuned.
  double tolerance(const Values& values) const {
    return pins_a_config(values) ? 1.0 + settings_.limits.min_improvement : 1.0;
  }

  const std::string& source_;
  const std::vector<Knob>& knobs_;
  const TunerSettings& settings_;
  const ProposalEvaluator& evaluate_;
  SearchOutcome outcome_;
  std::set<Values> tried_;
  std::vector<Values> seeds_;
  int used_ = 0;
};

}  // namespace

SearchOutcome tune_knobs(const std::string& source, const std::vector<Knob>& knobs,
                         const TunerSettings& settings, const ProposalEvaluator& evaluate) {
  return Search(source, knobs, settings, evaluate).run();
}

std::vector<KnobKind> priority_for_bound(const std::string& bound) {
  // The configs an author wrote come first: each is a whole configuration known to compile.
  if (bound == "memory-bound" || bound == "launch-bound") {
    return {KnobKind::autotune_config, KnobKind::block_size, KnobKind::num_warps,
            KnobKind::num_stages,      KnobKind::group_size, KnobKind::program_order};
  }
  if (bound == "compute-bound") {
    return {KnobKind::autotune_config, KnobKind::block_size,    KnobKind::num_stages,
            KnobKind::group_size,      KnobKind::program_order, KnobKind::num_warps};
  }
  if (bound == "latency-bound") {
    return {KnobKind::autotune_config, KnobKind::num_warps,  KnobKind::num_stages,
            KnobKind::block_size,      KnobKind::group_size, KnobKind::program_order};
  }
  return {KnobKind::autotune_config};
}

}  // namespace kforge::optimize
