#include <gtest/gtest.h>

#include <cmath>

#include "reward/reward_formulas.hpp"
#include "verify/verdict.hpp"

namespace kforge::reward {
namespace {

using verify::Outcome;
using verify::StageName;
using verify::StageStatus;

constexpr StageName kOrder[] = {StageName::extract,     StageName::static_analysis, StageName::compile,
                                StageName::correctness, StageName::runtime,         StageName::performance};

// A verdict document that passed every stage before `failed` (none: accepted), as verify::to_json writes it.
nlohmann::json verdict_failing_at(std::optional<StageName> failed, const std::string& rule = "",
                                  std::optional<double> speedup = std::nullopt,
                                  std::optional<double> coverage = std::nullopt) {
  auto verdict = verify::Verdict::with_all_stages_pending();
  verdict.outcome = failed ? Outcome::rejected : Outcome::accepted;
  for (const auto name : kOrder) {
    auto& stage = verdict.stage(name);
    if (failed && name == *failed) {
      stage.status = StageStatus::failed;
      if (!rule.empty()) {
        stage.findings.push_back({rule, rules::Severity::reject, "found", {1, 1}});
      }
      break;
    }
    stage.status = StageStatus::passed;
  }
  verdict.stage(StageName::static_analysis).details["launched_kernels"] = nlohmann::json::array({"kernel"});
  if (coverage) {
    verdict.stage(StageName::runtime).details["time_coverage"] = *coverage;
  }
  verdict.speedup = speedup;
  return verify::to_json(verdict);
}

double value(const nlohmann::json& verdict, const std::string& formula) {
  const auto reward = reward_for_verdict(verdict, parse_reward_spec(formula));
  EXPECT_TRUE(reward.value.has_value());
  return reward.value.value_or(NAN);
}

TEST(RewardFacts, ReadsEveryLevelAndTheCheatingFindings) {
  const auto facts = read_verdict_facts(verdict_failing_at(StageName::runtime, "ghost-replay"));
  EXPECT_TRUE(facts.evaluated && facts.code_found && facts.triton_kernel && facts.static_passed);
  EXPECT_TRUE(facts.compiled && facts.correct);
  EXPECT_FALSE(facts.runtime_passed || facts.accepted);
  EXPECT_EQ(facts.cheating, std::vector<std::string>{"ghost-replay"});
  EXPECT_FALSE(
      read_verdict_facts(verdict_failing_at(StageName::correctness, "output-mismatch")).cheating.size());
  EXPECT_FALSE(read_verdict_facts(verdict_failing_at(StageName::static_analysis, "triton-kernel-launched"))
                   .cheating.size());
}

TEST(RewardFacts, MalformedDocumentsGiveNoFacts) {
  EXPECT_FALSE(read_verdict_facts(nlohmann::json("junk")).evaluated);
  EXPECT_FALSE(read_verdict_facts(nlohmann::json{{"outcome", "error"}}).evaluated);
  const auto facts = read_verdict_facts(nlohmann::json{{"outcome", "rejected"}, {"stages", 3}});
  EXPECT_TRUE(facts.evaluated);
  EXPECT_FALSE(facts.code_found || facts.compiled || facts.correct);
}

TEST(KforgeReward, LevelsRiseWithEachStageAndSpeedupOnALogScale) {
  const double none = value(verdict_failing_at(StageName::extract), "kforge");
  const double format = value(verdict_failing_at(StageName::compile, "compile-error"), "kforge");
  const double compiled = value(verdict_failing_at(StageName::correctness, "output-mismatch"), "kforge");
  const double correct_cpu = value(verdict_failing_at(std::nullopt), "kforge");
  const double slow = value(verdict_failing_at(std::nullopt, "", 0.5), "kforge");
  const double even = value(verdict_failing_at(std::nullopt, "", 1.0), "kforge");
  const double fast = value(verdict_failing_at(std::nullopt, "", 4.0), "kforge");
  const double faster = value(verdict_failing_at(std::nullopt, "", 40.0), "kforge");
  EXPECT_DOUBLE_EQ(none, 0.0);
  EXPECT_DOUBLE_EQ(format, 0.1);
  EXPECT_DOUBLE_EQ(compiled, 0.2);
  EXPECT_DOUBLE_EQ(correct_cpu, 0.5);
  EXPECT_DOUBLE_EQ(slow, 0.5);
  EXPECT_NEAR(even, 0.5 + 0.5 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(fast, 1.0);
  EXPECT_DOUBLE_EQ(faster, 1.0) << "capped at 4x by default";
}

TEST(KforgeReward, CheatingGetsThePenaltyWhateverElsePassed) {
  const auto cheat = verdict_failing_at(StageName::performance, "timed-output-mismatch");
  EXPECT_DOUBLE_EQ(value(cheat, "kforge"), -1.0);
  const auto spec = parse_reward_spec(nlohmann::json{{"formula", "kforge"}, {"cheating_penalty", -0.5}});
  EXPECT_DOUBLE_EQ(reward_for_verdict(cheat, spec).value.value_or(0.0), -0.5);
  EXPECT_DOUBLE_EQ(
      value(verdict_failing_at(StageName::static_analysis, "torch-compute-in-forward"), "kforge"), -1.0);
  EXPECT_DOUBLE_EQ(value(verdict_failing_at(StageName::static_analysis, "a-rule-added-later"), "kforge"),
                   -1.0)
      << "unknown honesty findings count as cheating";
}

TEST(AutoTritonReward, RuleTimesExecution) {
  EXPECT_DOUBLE_EQ(value(verdict_failing_at(std::nullopt, "", 0.3), "autotriton"), 1.0);
  EXPECT_DOUBLE_EQ(value(verdict_failing_at(StageName::correctness, "output-mismatch"), "autotriton"), 0.0);
  EXPECT_DOUBLE_EQ(value(verdict_failing_at(StageName::runtime, "triton-kernel-ran"), "autotriton"), 0.0);
}

TEST(TritonRlReward, ValidTimesCorrectPlusClippedSpeedup) {
  const auto reward =
      reward_for_verdict(verdict_failing_at(std::nullopt, "", 3.0), parse_reward_spec("tritonrl"));
  EXPECT_DOUBLE_EQ(reward.components["r_correct"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(reward.components["r_speedup"].get<double>(), 2.0) << "clip(speedup, 2)";
  EXPECT_DOUBLE_EQ(reward.value.value_or(0.0), 3.0);
  EXPECT_DOUBLE_EQ(value(verdict_failing_at(std::nullopt, "", 0.7), "tritonrl"), 1.7);
  EXPECT_DOUBLE_EQ(
      value(verdict_failing_at(StageName::static_analysis, "torch-compute-in-forward"), "tritonrl"), 0.0);
}

TEST(DrKernelReward, CorrectSpeedupAndCoverage) {
  EXPECT_DOUBLE_EQ(value(verdict_failing_at(std::nullopt, "", 2.0, 0.8), "drkernel"), 0.5 + 1.0 + 0.4);
  EXPECT_DOUBLE_EQ(value(verdict_failing_at(std::nullopt, "", 9.0, 1.0), "drkernel"), 0.5 + 1.5 + 0.5);
  EXPECT_DOUBLE_EQ(value(verdict_failing_at(StageName::runtime, "ghost-replay"), "drkernel"), 0.0)
      << "a decoy kernel scores 0";
  EXPECT_DOUBLE_EQ(value(verdict_failing_at(StageName::correctness, "output-mismatch"), "drkernel"), 0.0);
}

TEST(WeightedReward, SumsTheWeightedComponents) {
  const auto spec = parse_reward_spec(nlohmann::json{
      {"formula", "weighted"}, {"weights", {{"correct", 1.0}, {"speedup", 0.25}, {"cheating", -2.0}}}});
  EXPECT_DOUBLE_EQ(reward_for_verdict(verdict_failing_at(std::nullopt, "", 2.0), spec).value.value_or(0.0),
                   1.5);
  EXPECT_DOUBLE_EQ(
      reward_for_verdict(verdict_failing_at(StageName::runtime, "ghost-replay"), spec).value.value_or(0.0),
      -2.0);
}

TEST(Reward, AnEvaluationErrorHasNoRewardInAnyFormula) {
  auto verdict = verify::Verdict::with_all_stages_pending();
  verdict.outcome = Outcome::error;
  for (const char* formula : {"kforge", "autotriton", "tritonrl", "drkernel"}) {
    const auto reward = reward_for_verdict(verify::to_json(verdict), parse_reward_spec(formula));
    EXPECT_FALSE(reward.value.has_value()) << formula;
    EXPECT_TRUE(to_json(reward, parse_reward_spec(formula))["reward"].is_null());
  }
}

}  // namespace
}  // namespace kforge::reward
