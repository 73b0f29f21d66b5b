#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace kforge::reward {

enum class Formula : std::uint8_t { kforge, autotriton, tritonrl, drkernel, weighted };

std::string to_string(Formula formula);

// Which reward a request wants and its parameters. Every field has the published default.
struct RewardSpec {
  Formula formula = Formula::kforge;
  // weighted: weight per component (format, static, compiled, correct, speedup, time_coverage, cheating)
  std::map<std::string, double> weights;
  double speedup_cap = 0.0;        // 0: the formula's own cap (kforge 4, tritonrl 2, drkernel 3, weighted 4)
  double cheating_penalty = -1.0;  // kforge: the reward when cheating was detected
};

// Parses {"formula": NAME, "weights": {...}, "speedup_cap": X, "cheating_penalty": Y} or a bare NAME
// string. Throws std::invalid_argument naming the bad field and the accepted values.
RewardSpec parse_reward_spec(const nlohmann::json& spec);

// The names a spec may use, for help texts and errors.
std::string formula_names();

// The component names "weighted" accepts.
std::string weighted_component_names();

nlohmann::json to_json(const RewardSpec& spec);

}  // namespace kforge::reward
