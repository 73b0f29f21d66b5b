#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "optimize/knob_tuner.hpp"
#include "optimize/tunable_knobs.hpp"

namespace kforge::optimize {
namespace {

constexpr const char* kCandidate = R"(import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        scale_kernel[(4,)](x, out, x.numel(), BLOCK=BLOCK, num_warps=4)
        return out
)";

long long value_of(const KnobSearch& search, const std::string& name) {
  return std::find_if(search.knobs.begin(), search.knobs.end(),
                      [&](const Knob& knob) { return knob.name == name; })
      ->value;
}

// A made-up machine: fastest at BLOCK 4096 with 8 warps; BLOCK 16384 breaks the kernel. It reads the
// values back from the rewritten source, as the verdict pipeline would run exactly that source.
ProposalResult model_run(const std::string& source) {
  const auto search = find_knobs(source);
  const auto block = static_cast<double>(value_of(search, "BLOCK"));
  const auto warps = static_cast<double>(value_of(search, "num_warps"));
  if (block > 8192) {
    return {false, std::nullopt, "rejected at correctness: output mismatch"};
  }
  const double ms = 1.0 + 0.1 * std::abs(std::log2(block) - 12) + 0.05 * std::abs(std::log2(warps) - 3);
  return {true, ms, "accepted"};
}

std::vector<ProposalResult> model_machine(const std::vector<std::string>& sources,
                                          Measurement /*measurement*/) {
  std::vector<ProposalResult> results;
  results.reserve(sources.size());
  for (const auto& source : sources) {
    results.push_back(model_run(source));
  }
  return results;
}

TEST(KnobTuner, FindsTheFastestAcceptedValuesAndKeepsEveryAttempt) {
  const auto knobs = find_knobs(kCandidate).knobs;
  ASSERT_EQ(knobs.size(), 3U) << "BLOCK, num_warps, and num_stages, which the launch leaves out";
  TunerSettings settings;
  settings.limits.max_evaluations = 100;
  settings.priority = priority_for_bound("memory-bound");
  const auto outcome = tune_knobs(kCandidate, knobs, settings, model_machine);
  const auto best = find_knobs(outcome.best_source);
  EXPECT_EQ(value_of(best, "BLOCK"), 4096);
  EXPECT_EQ(value_of(best, "num_warps"), 8);
  ASSERT_TRUE(outcome.baseline_ms && outcome.best_ms);
  EXPECT_NEAR(*outcome.baseline_ms, 1.2 + 0.05, 1e-9);
  EXPECT_NEAR(*outcome.best_ms, 1.0, 1e-9);
  ASSERT_GE(outcome.best_ms_after_round.size(), 2U);
  EXPECT_EQ(outcome.best_ms_after_round.front(), *outcome.baseline_ms);
  EXPECT_EQ(outcome.best_ms_after_round.back(), *outcome.best_ms);
  EXPECT_TRUE(std::is_sorted(outcome.best_ms_after_round.rbegin(), outcome.best_ms_after_round.rend()));
  EXPECT_TRUE(std::any_of(outcome.attempts.begin(), outcome.attempts.end(), [](const SearchAttempt& attempt) {
    return !attempt.result.accepted;
  })) << "BLOCK 16384 was proposed and rejected";
  EXPECT_FALSE(outcome.stop_reason.empty());
  EXPECT_LE(outcome.attempts.size(), 100U);
}

TEST(KnobTuner, StopsAtTheBudget) {
  const auto knobs = find_knobs(kCandidate).knobs;
  TunerSettings settings;
  settings.limits.max_evaluations = 5;
  const auto outcome = tune_knobs(kCandidate, knobs, settings, model_machine);
  EXPECT_EQ(outcome.attempts.size(), 5U);
  EXPECT_NE(outcome.stop_reason.find("budget of 5"), std::string::npos) << outcome.stop_reason;
}

// The machine's optimum is 1.0 ms; a target of 1.1 ms is met before it, so the search ends there.
TEST(KnobTuner, StopsOnceTheBestMeetsTheTarget) {
  const auto knobs = find_knobs(kCandidate).knobs;
  TunerSettings settings;
  settings.limits.max_evaluations = 100;
  settings.limits.target_ms = 1.1;
  settings.limits.target_description = "within 5% of the roofline floor";
  const auto outcome = tune_knobs(kCandidate, knobs, settings, model_machine);
  ASSERT_TRUE(outcome.best_ms);
  EXPECT_LE(*outcome.best_ms, 1.1);
  EXPECT_NE(outcome.stop_reason.find("at or under the target of 1.1 ms: within 5% of the roofline floor"),
            std::string::npos)
      << outcome.stop_reason;
  TunerSettings untargeted = settings;
  untargeted.limits.target_ms.reset();
  EXPECT_LT(outcome.attempts.size(),
            tune_knobs(kCandidate, knobs, untargeted, model_machine).attempts.size());
}

TEST(KnobTuner, AStartAlreadyAtTheTargetIsNotTuned) {
  const auto knobs = find_knobs(kCandidate).knobs;
  TunerSettings settings;
  settings.limits.target_ms = 2.0;  // the start runs in 1.25 ms
  const auto outcome = tune_knobs(kCandidate, knobs, settings, model_machine);
  EXPECT_EQ(outcome.attempts.size(), 1U);
  EXPECT_EQ(outcome.best_source, kCandidate);
  EXPECT_NE(outcome.stop_reason.find("target of 2 ms"), std::string::npos) << outcome.stop_reason;
}

// A kernel with three autotune configs; the model machine runs the list kept (the autotuner's pick,
// 1.2 ms), or a pinned config: the third is the fastest.
TEST(KnobTuner, EveryAutotuneConfigIsTriedInTheFirstRound) {
  const std::string source = R"(import torch
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 128}), triton.Config({'BLOCK': 512})],
                 key=['n'])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    pass

class ModelNew(torch.nn.Module):
    def forward(self, x):
        k[(1,)](x, x.numel())
        return x
)";
  const auto knobs = find_knobs(source).knobs;
  ASSERT_EQ(knobs.size(), 1U);
  const auto machine = [](const std::vector<std::string>& sources, Measurement) {
    std::vector<ProposalResult> results;
    for (const auto& candidate : sources) {
      const bool all = candidate.find("'BLOCK': 64}), triton") != std::string::npos;
      const double ms = all ? 1.2 : candidate.find("512") != std::string::npos ? 0.7 : 1.5;
      results.push_back({true, ms, "accepted"});
    }
    return results;
  };
  TunerSettings settings;
  settings.priority = priority_for_bound("compute-bound");
  const auto outcome = tune_knobs(source, knobs, settings, machine);
  EXPECT_EQ(outcome.best_values, (std::vector<long long>{2}));
  EXPECT_NE(outcome.best_source.find("configs=[triton.Config({'BLOCK': 512})],"), std::string::npos)
      << outcome.best_source;
  const auto screened_in_round_1 =
      std::count_if(outcome.attempts.begin(), outcome.attempts.end(), [](const SearchAttempt& attempt) {
        return attempt.round == 1 && attempt.measurement == Measurement::screening;
      });
  EXPECT_EQ(screened_in_round_1, 3);
}

// The autotuner already picks the fastest config, so pinning it gains nothing; it is pinned all the
// same (within the minimum improvement), since a pinned config's values can then be tuned.
TEST(KnobTuner, AConfigAsFastAsTheAutotunersPickIsPinned) {
  const std::string source = R"(import torch
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 512})], key=['n'])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    pass

class ModelNew(torch.nn.Module):
    def forward(self, x):
        k[(1,)](x, x.numel())
        return x
)";
  const auto knobs = find_knobs(source).knobs;
  const auto machine = [](const std::vector<std::string>& sources, Measurement) {
    std::vector<ProposalResult> results;
    for (const auto& candidate : sources) {
      const bool all = candidate.find("'BLOCK': 64}), triton") != std::string::npos;
      const double ms = all ? 1.0 : candidate.find("512") != std::string::npos ? 1.01 : 1.5;
      results.push_back({true, ms, "accepted"});
    }
    return results;
  };
  const auto outcome = tune_knobs(source, knobs, TunerSettings{}, machine);
  EXPECT_EQ(outcome.best_values, (std::vector<long long>{1}));
  EXPECT_DOUBLE_EQ(*outcome.best_ms, 1.01);
}

TEST(KnobTuner, AStartingCandidateWithoutATimingIsReportedNotTuned) {
  const auto knobs = find_knobs(kCandidate).knobs;
  const auto rejecting = [](const std::vector<std::string>& sources, Measurement) {
    return std::vector<ProposalResult>(sources.size(),
                                       ProposalResult{false, std::nullopt, "rejected at static: no launch"});
  };
  const auto outcome = tune_knobs(kCandidate, knobs, TunerSettings{}, rejecting);
  EXPECT_EQ(outcome.attempts.size(), 1U);
  EXPECT_EQ(outcome.best_source, kCandidate);
  EXPECT_NE(outcome.stop_reason.find("rejected at static"), std::string::npos);
}

TEST(KnobTuner, NoiseBelowTheMinimumImprovementDoesNotMoveTheBest) {
  const auto knobs = find_knobs(kCandidate).knobs;
  TunerSettings settings;
  settings.limits.min_improvement = 0.5;  // nothing in the model machine is twice as fast
  const auto outcome = tune_knobs(kCandidate, knobs, settings, model_machine);
  EXPECT_EQ(outcome.best_source, kCandidate);
  EXPECT_NE(outcome.stop_reason.find("no improvement"), std::string::npos) << outcome.stop_reason;
}

// A tiled matmul with the six knobs of problems/baseline/07 (names as there).
constexpr const char* kMatmul = R"(import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    acc = tl.dot(a, b, acc)


class ModelNew(torch.nn.Module):
    BLOCK_M = 32
    BLOCK_N = 32
    BLOCK_K = 32
    GROUP_M = 1

    def forward(self, a, b):
        matmul_kernel[(1,)](a, b, a, BLOCK_M=self.BLOCK_M, BLOCK_N=self.BLOCK_N, BLOCK_K=self.BLOCK_K,
                            GROUP_M=self.GROUP_M, num_warps=4, num_stages=1)
        return a
)";

// A made-up GPU where the matmul is fastest with 128x128x64 tiles, 8 warps, 3 stages and group 8, each
// knob's distance from there costing time (log2 steps), so one knob at a time needs many rounds.
std::vector<ProposalResult> matmul_machine(const std::vector<std::string>& sources, Measurement /*unused*/) {
  std::vector<ProposalResult> results;
  results.reserve(sources.size());
  for (const auto& source : sources) {
    const auto search = find_knobs(source);
    const auto off = [&](const std::string& name, double best) {
      return std::abs(std::log2(static_cast<double>(value_of(search, name))) - std::log2(best));
    };
    const double ms = 1.0 + off("BLOCK_M", 128) + off("BLOCK_N", 128) + off("BLOCK_K", 64) +
                      0.5 * (off("num_warps", 8) + off("num_stages", 3) + off("GROUP_M", 8));
    results.push_back({true, ms, "accepted"});
  }
  return results;
}

TEST(KnobTuner, ADotKernelStartsFromKnownGoodTilesInItsFirstRound) {
  const auto knobs = find_knobs(kMatmul).knobs;
  ASSERT_EQ(knobs.size(), 6U);
  TunerSettings settings;
  settings.limits.max_evaluations = 30;
  const auto outcome = tune_knobs(kMatmul, knobs, settings, matmul_machine);
  const auto best = find_knobs(outcome.best_source);
  EXPECT_EQ(value_of(best, "BLOCK_M"), 128);
  EXPECT_EQ(value_of(best, "BLOCK_N"), 128);
  EXPECT_EQ(value_of(best, "BLOCK_K"), 64);
  EXPECT_EQ(value_of(best, "num_warps"), 8);
  EXPECT_EQ(value_of(best, "num_stages"), 3);
  EXPECT_NEAR(*outcome.best_ms, 1.0, 1e-9) << "found within one round of a budget of 30";
  EXPECT_EQ(outcome.attempts.at(1).values, (std::vector<long long>{128, 128, 64, 8, 8, 3}))
      << "the first proposal is the first known-good tile (knobs in source order: M, N, K, group, warps, "
         "stages)";
}

TEST(KnobTuner, AKernelWithoutTlDotGetsNoTileSeeds) {
  const auto knobs = find_knobs(kCandidate).knobs;
  TunerSettings settings;
  settings.limits.max_evaluations = 3;
  const auto outcome = tune_knobs(kCandidate, knobs, settings, model_machine);
  ASSERT_GE(outcome.attempts.size(), 2U);
  EXPECT_EQ(outcome.attempts[1].values, (std::vector<long long>{512, 4, 3})) << "a neighbour of the start";
}

// num_warps computed at run time: value -1 keeps the expression and has no place among the literals,
// so the first round proposes every warp count.
TEST(KnobTuner, ALaunchOptionComputedAtRunTimeGetsEveryChoiceProposed) {
  // The fixture above with its num_warps computed in forward (and num_stages given, to isolate warps).
  std::string source = kCandidate;
  const std::string launch = "        scale_kernel[(4,)](x, out, x.numel(), BLOCK=BLOCK, num_warps=4)\n";
  const auto at = source.find(launch);
  ASSERT_NE(at, std::string::npos);
  source.replace(
      at, launch.size(),
      "        warps = 4 if x.numel() < 65536 else 8\n"
      "        scale_kernel[(4,)](x, out, x.numel(), BLOCK=BLOCK, num_warps=warps, num_stages=2)\n");
  const auto knobs = find_knobs(source).knobs;
  ASSERT_EQ(knobs.size(), 3U);
  ASSERT_EQ(knobs[2].site, KnobSite::run_time);
  std::vector<long long> warps_tried;
  const auto record = [&](const std::vector<std::string>& sources, Measurement /*measurement*/) {
    std::vector<ProposalResult> results;
    for (const auto& proposal : sources) {
      const auto found = find_knobs(proposal).knobs;
      const auto warps = std::find_if(found.begin(), found.end(), [](const Knob& knob) {
        return knob.kind == KnobKind::num_warps && knob.site == KnobSite::literal;
      });
      warps_tried.push_back(warps == found.end() ? kRunTimeValue : warps->value);
      results.push_back({true, 1.0, "accepted"});
    }
    return results;
  };
  TunerSettings settings;
  settings.limits.max_evaluations = 30;
  settings.limits.patience = 1;
  tune_knobs(source, knobs, settings, record);
  for (const long long warps : {1, 2, 4, 8, 16}) {
    EXPECT_NE(std::find(warps_tried.begin(), warps_tried.end(), warps), warps_tried.end()) << warps;
  }
}

}  // namespace
}  // namespace kforge::optimize
