#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "reward/reward_spec.hpp"

namespace kforge::reward {
namespace {

std::string error_of(const nlohmann::json& spec) {
  try {
    parse_reward_spec(spec);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(RewardSpec, NamesAndObjectsParse) {
  EXPECT_EQ(parse_reward_spec(nullptr).formula, Formula::kforge);
  EXPECT_EQ(parse_reward_spec("drkernel").formula, Formula::drkernel);
  const auto spec = parse_reward_spec(nlohmann::json{{"formula", "tritonrl"}, {"speedup_cap", 3}});
  EXPECT_EQ(spec.formula, Formula::tritonrl);
  EXPECT_DOUBLE_EQ(spec.speedup_cap, 3.0);
  EXPECT_EQ(to_json(spec)["formula"], "tritonrl");
}

TEST(RewardSpec, BadSpecsNameTheFieldAndTheChoices) {
  EXPECT_NE(error_of("best").find("kforge, autotriton, tritonrl, drkernel, weighted"), std::string::npos);
  EXPECT_NE(error_of(nlohmann::json{{"formula", "weighted"}}).find("weights"), std::string::npos);
  EXPECT_NE(error_of(nlohmann::json{{"formula", "weighted"}, {"weights", {{"speed", 1}}}}).find("'speed'"),
            std::string::npos);
  EXPECT_NE(error_of(nlohmann::json{{"speedup_cap", -1}}).find("positive"), std::string::npos);
  EXPECT_NE(error_of(nlohmann::json{{"speedup_cap", "2"}}).find("finite number"), std::string::npos);
  EXPECT_NE(error_of(nlohmann::json{{"colour", 1}}).find("'colour'"), std::string::npos);
  EXPECT_NE(error_of(nlohmann::json{{"weights", {{"correct", 1}}}}).find("only to the formula 'weighted'"),
            std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::array()).find("formula name"), std::string::npos);
  EXPECT_NE(error_of("weighted").find("weights"), std::string::npos);
}

TEST(RewardSpec, ACheatingPenaltyIsOnlyForTheFormulaThatUsesIt) {
  EXPECT_DOUBLE_EQ(parse_reward_spec(nlohmann::json{{"cheating_penalty", -2}}).cheating_penalty, -2.0);
  for (const char* formula : {"autotriton", "tritonrl", "drkernel"}) {
    const auto error = error_of(nlohmann::json{{"formula", formula}, {"cheating_penalty", -2}});
    EXPECT_NE(error.find("'cheating_penalty'"), std::string::npos) << error;
    EXPECT_NE(error.find(formula), std::string::npos) << error;
    EXPECT_FALSE(to_json(parse_reward_spec(formula)).contains("cheating_penalty"))
        << "a spec written back must parse again";
  }
  // The key order does not matter: the penalty may come before the formula.
  const auto weighted = error_of(
      nlohmann::json::parse(R"({"cheating_penalty": -3, "formula": "weighted", "weights": {"correct": 1}})"));
  EXPECT_NE(weighted.find("'cheating' component"), std::string::npos) << weighted;
}

}  // namespace
}  // namespace kforge::reward
