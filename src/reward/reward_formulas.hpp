#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "reward/reward_spec.hpp"
#include "reward/verdict_facts.hpp"

namespace kforge::reward {

// A reward and every term it was made of. `value` is empty when the verdict is an evaluation error
// (not the candidate's doing): a trainer should skip that sample rather than punish it.
struct Reward {
  Formula formula = Formula::kforge;
  std::optional<double> value;
  nlohmann::json components = nlohmann::json::object();
  std::string explanation;  // one line: which level the candidate reached and why
};

Reward compute_reward(const VerdictFacts& facts, const RewardSpec& spec);

// Convenience: read_verdict_facts + compute_reward.
Reward reward_for_verdict(const nlohmann::json& verdict, const RewardSpec& spec);

// {"formula", "reward", "components", "explanation", "spec"}
nlohmann::json to_json(const Reward& reward, const RewardSpec& spec);

}  // namespace kforge::reward
