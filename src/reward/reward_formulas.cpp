#include "reward/reward_formulas.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kforge::reward {
namespace {

double flag(bool value) { return value ? 1.0 : 0.0; }

double cap_or(const RewardSpec& spec, double fallback) {
  return spec.speedup_cap > 0.0 ? spec.speedup_cap : fallback;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : ", ") + item;
  }
  return text;
}

// Correct in the sense every formula needs: right outputs, and the candidate's own kernels did the work.
bool honestly_correct(const VerdictFacts& facts) {
  return facts.correct && facts.runtime_passed && facts.cheating.empty();
}

// kforge: hierarchical levels, each counted only when the one before it was reached.
Reward kforge_reward(const VerdictFacts& facts, const RewardSpec& spec) {
  Reward reward;
  const double cap = cap_or(spec, 4.0);
  const bool format = facts.code_found && facts.triton_kernel;
  const bool compiled = format && facts.static_passed && facts.compiled;
  const bool correct = compiled && honestly_correct(facts);
  double speedup_term = 0.0;
  nlohmann::json speedup_json = nullptr;
  if (correct && facts.speedup) {
    // log scale: 0.5x or slower earns 0, the cap or faster earns the whole 0.5
    const double scaled = std::log2(2.0 * std::max(*facts.speedup, 1e-9)) / std::log2(2.0 * cap);
    speedup_term = 0.5 * std::clamp(scaled, 0.0, 1.0);
    speedup_json = speedup_term;
  }
  reward.components = {{"format", 0.1 * flag(format)},
                       {"compiled", 0.1 * flag(compiled)},
                       {"correct", 0.3 * flag(correct)},
                       {"speedup", speedup_json},
                       {"speedup_cap", cap},
                       {"cheating", facts.cheating}};
  if (!facts.cheating.empty()) {
    reward.value = spec.cheating_penalty;
    reward.explanation = "cheating detected (" + joined(facts.cheating) + "): the penalty";
    return reward;
  }
  reward.value = 0.1 * flag(format) + 0.1 * flag(compiled) + 0.3 * flag(correct) + speedup_term;
  reward.explanation = !format         ? "no Triton kernel launched from forward (or no code found)"
                       : !compiled     ? "did not pass static analysis and compilation"
                       : !correct      ? "compiled but not correct"
                       : facts.speedup ? fmt::format("correct, {:.3g}x", *facts.speedup)
                                       : "correct, not timed (no GPU)";
  return reward;
}

// AutoTriton: rule-based reward (a real Triton kernel does the work) times the execution reward.
Reward autotriton_reward(const VerdictFacts& facts) {
  Reward reward;
  const bool rule = facts.code_found && facts.triton_kernel && facts.static_passed &&
                    facts.cheating.empty() && (!facts.correct || facts.runtime_passed);
  const bool execution = facts.correct;
  reward.components = {{"rule", flag(rule)}, {"execution", flag(execution)}, {"cheating", facts.cheating}};
  reward.value = flag(rule) * flag(execution);
  reward.explanation = !rule        ? "rule-based check failed (no honest Triton kernel)"
                       : !execution ? "execution check failed (not correct)"
                                    : "Triton kernel, correct";
  return reward;
}

// TritonRL: valid = syntax x functional; R_correct = valid*correct; R_speedup = valid*clip(speedup, cap).
Reward tritonrl_reward(const VerdictFacts& facts, const RewardSpec& spec) {
  Reward reward;
  const double cap = cap_or(spec, 2.0);
  const bool syntax = facts.code_found && facts.triton_kernel;
  const bool functional =
      facts.static_passed && facts.cheating.empty() && (!facts.correct || facts.runtime_passed);
  const double valid = flag(syntax && functional);
  const double correct = valid * flag(facts.correct);
  const double speedup = correct > 0.0 && facts.speedup ? std::clamp(*facts.speedup, 0.0, cap) : 0.0;
  reward.components = {{"syntax", flag(syntax)},    {"functional", flag(functional)}, {"valid", valid},
                       {"r_correct", correct},      {"r_speedup", valid * speedup},   {"speedup_cap", cap},
                       {"cheating", facts.cheating}};
  reward.value = correct + valid * speedup;
  reward.explanation = valid == 0.0     ? "invalid (no Triton kernel, or it is not what does the work)"
                       : correct == 0.0 ? "valid but not correct"
                                        : fmt::format("valid and correct, speedup term {:.3g}", speedup);
  return reward;
}

// Dr. Kernel: 0.5*correct + 0.5*clip(speedup, 0, cap) + 0.5*time_coverage when correct; cheating scores 0.
Reward drkernel_reward(const VerdictFacts& facts, const RewardSpec& spec) {
  Reward reward;
  const double cap = cap_or(spec, 3.0);
  const bool correct = honestly_correct(facts) && facts.triton_kernel;
  const double speedup = correct && facts.speedup ? std::clamp(*facts.speedup, 0.0, cap) : 0.0;
  const double coverage = correct && facts.time_coverage ? std::clamp(*facts.time_coverage, 0.0, 1.0) : 0.0;
  reward.components = {
      {"correct", flag(correct)},
      {"speedup", correct && facts.speedup ? nlohmann::json(speedup) : nlohmann::json(nullptr)},
      {"time_coverage", correct && facts.time_coverage ? nlohmann::json(coverage) : nlohmann::json(nullptr)},
      {"speedup_cap", cap},
      {"cheating", facts.cheating}};
  reward.value = correct ? 0.5 + 0.5 * speedup + 0.5 * coverage : 0.0;
  reward.explanation = !facts.cheating.empty() ? "cheating detected (" + joined(facts.cheating) + "): 0"
                       : !correct              ? "not correct: 0"
                                               : "correct";
  return reward;
}

// User weights over the named components.
Reward weighted_reward(const VerdictFacts& facts, const RewardSpec& spec) {
  Reward reward;
  const double cap = cap_or(spec, 4.0);
  const bool correct = honestly_correct(facts);
  const nlohmann::json values = {
      {"format", flag(facts.code_found && facts.triton_kernel)},
      {"static", flag(facts.static_passed)},
      {"compiled", flag(facts.compiled)},
      {"correct", flag(correct)},
      {"speedup", correct && facts.speedup ? std::clamp(*facts.speedup, 0.0, cap) : 0.0},
      {"time_coverage", correct && facts.time_coverage ? std::clamp(*facts.time_coverage, 0.0, 1.0) : 0.0},
      {"cheating", flag(!facts.cheating.empty())},
  };
  double total = 0.0;
  for (const auto& [name, weight] : spec.weights) {
    total += weight * values.at(name).get<double>();
  }
  reward.components = values;
  reward.components["weights"] = spec.weights;
  reward.components["cheating_findings"] = facts.cheating;
  reward.value = total;
  reward.explanation = "weighted sum of the components";
  return reward;
}

}  // namespace

Reward compute_reward(const VerdictFacts& facts, const RewardSpec& spec) {
  if (!facts.evaluated) {
    Reward none;
    none.formula = spec.formula;
    none.explanation = "no verdict on the candidate (evaluation error): no reward";
    return none;
  }
  Reward reward;
  switch (spec.formula) {
    case Formula::kforge:
      reward = kforge_reward(facts, spec);
      break;
    case Formula::autotriton:
      reward = autotriton_reward(facts);
      break;
    case Formula::tritonrl:
      reward = tritonrl_reward(facts, spec);
      break;
    case Formula::drkernel:
      reward = drkernel_reward(facts, spec);
      break;
    case Formula::weighted:
      reward = weighted_reward(facts, spec);
      break;
  }
  reward.formula = spec.formula;
  return reward;
}

Reward reward_for_verdict(const nlohmann::json& verdict, const RewardSpec& spec) {
  return compute_reward(read_verdict_facts(verdict), spec);
}

nlohmann::json to_json(const Reward& reward, const RewardSpec& spec) {
  return {{"formula", to_string(reward.formula)},
          {"reward", reward.value ? nlohmann::json(*reward.value) : nlohmann::json(nullptr)},
          {"components", reward.components},
          {"explanation", reward.explanation},
          {"spec", to_json(spec)}};
}

}  // namespace kforge::reward
