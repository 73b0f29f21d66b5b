#include "reward/reward_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string_view>

namespace kforge::reward {
namespace {

constexpr std::array<std::pair<std::string_view, Formula>, 5> kFormulas = {{
    {"kforge", Formula::kforge},
    {"autotriton", Formula::autotriton},
    {"tritonrl", Formula::tritonrl},
    {"drkernel", Formula::drkernel},
    {"weighted", Formula::weighted},
}};

constexpr std::array<std::string_view, 7> kComponents = {"format",  "static",        "compiled", "correct",
                                                         "speedup", "time_coverage", "cheating"};

Formula formula_named(const std::string& name) {
  for (const auto& [known, formula] : kFormulas) {
    if (known == name) {
      return formula;
    }
  }
  throw std::invalid_argument(
      fmt::format("unknown reward formula '{}': expected one of {}", name, formula_names()));
}

double finite_number(const nlohmann::json& value, const std::string& field) {
  if (!value.is_number() || !std::isfinite(value.get<double>())) {
    throw std::invalid_argument(
        fmt::format("reward field '{}' must be a finite number, got {}", field,
                    value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  }
  return value.get<double>();
}

std::map<std::string, double> parse_weights(const nlohmann::json& weights) {
  if (!weights.is_object() || weights.empty()) {
    throw std::invalid_argument(
        fmt::format("reward 'weights' must be a non-empty object of component: number, components: {}",
                    weighted_component_names()));
  }
  std::map<std::string, double> parsed;
  for (const auto& [name, value] : weights.items()) {
    if (std::find(kComponents.begin(), kComponents.end(), name) == kComponents.end()) {
      throw std::invalid_argument(fmt::format("unknown reward component '{}' in 'weights': expected {}", name,
                                              weighted_component_names()));
    }
    parsed[name] = finite_number(value, "weights." + name);
  }
  return parsed;
}

}  // namespace

std::string to_string(Formula formula) {
  for (const auto& [name, known] : kFormulas) {
    if (known == formula) {
      return std::string(name);
    }
  }
  return "kforge";
}

std::string formula_names() {
  std::string names;
  for (const auto& [name, formula] : kFormulas) {
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  return names;
}

std::string weighted_component_names() {
  std::string names;
  for (const auto name : kComponents) {
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  return names;
}

RewardSpec parse_reward_spec(const nlohmann::json& spec) {
  RewardSpec parsed;
  if (spec.is_null()) {
    return parsed;
  }
  if (spec.is_string()) {
    parsed.formula = formula_named(spec.get<std::string>());
    if (parsed.formula == Formula::weighted) {
      throw std::invalid_argument("reward formula 'weighted' needs an object with 'weights'");
    }
    return parsed;
  }
  if (!spec.is_object()) {
    throw std::invalid_argument(
        fmt::format("a reward spec is a formula name ({}) or an object", formula_names()));
  }
  bool penalty_given = false;
  for (const auto& [key, value] : spec.items()) {
    if (key == "formula") {
      if (!value.is_string()) {
        throw std::invalid_argument(fmt::format("reward 'formula' must be one of {}", formula_names()));
      }
      parsed.formula = formula_named(value.get<std::string>());
    } else if (key == "weights") {
      parsed.weights = parse_weights(value);
    } else if (key == "speedup_cap") {
      parsed.speedup_cap = finite_number(value, key);
      if (parsed.speedup_cap <= 0.0) {
        throw std::invalid_argument("reward 'speedup_cap' must be positive");
      }
    } else if (key == "cheating_penalty") {
      parsed.cheating_penalty = finite_number(value, key);
      penalty_given = true;
    } else {
      throw std::invalid_argument(fmt::format(
          "unknown reward field '{}': expected formula, weights, speedup_cap, cheating_penalty", key));
    }
  }
  if (parsed.formula == Formula::weighted && parsed.weights.empty()) {
    throw std::invalid_argument("reward formula 'weighted' needs 'weights'");
  }
  if (parsed.formula != Formula::weighted && !parsed.weights.empty()) {
    throw std::invalid_argument("reward 'weights' apply only to the formula 'weighted'");
  }
  if (penalty_given && parsed.formula != Formula::kforge) {
    throw std::invalid_argument(fmt::format(
        "reward 'cheating_penalty' applies only to the formula 'kforge', not '{}'{}",
        to_string(parsed.formula),
        parsed.formula == Formula::weighted ? " (give the 'cheating' component a negative weight instead)"
                                            : " (its cheating rule is fixed: docs/rewards.md)"));
  }
  return parsed;
}

nlohmann::json to_json(const RewardSpec& spec) {
  nlohmann::json document = {{"formula", to_string(spec.formula)}};
  if (!spec.weights.empty()) {
    document["weights"] = spec.weights;
  }
  if (spec.speedup_cap > 0.0) {
    document["speedup_cap"] = spec.speedup_cap;
  }
  if (spec.formula == Formula::kforge) {
    document["cheating_penalty"] = spec.cheating_penalty;
  }
  return document;
}

}  // namespace kforge::reward
