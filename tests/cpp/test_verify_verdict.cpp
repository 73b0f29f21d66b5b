#include <gtest/gtest.h>

#include "verify/verdict.hpp"

namespace kforge::verify {
namespace {

TEST(Verdict, StartsWithAllFiveStagesPendingInOrder) {
  const auto verdict = Verdict::with_all_stages_pending();
  const auto document = to_json(verdict);
  ASSERT_EQ(document["stages"].size(), 6U);
  const std::vector<std::string> names{"extract",     "static",  "compile",
                                       "correctness", "runtime", "performance"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(document["stages"][i]["name"], names[i]);
    EXPECT_EQ(document["stages"][i]["status"], "not_run");
  }
  EXPECT_EQ(document["schema"], "kforge.verdict/2");
  EXPECT_EQ(document["outcome"], "error");
}

TEST(Verdict, RejectionNamesTheFirstFailedStage) {
  auto verdict = Verdict::with_all_stages_pending();
  verdict.outcome = Outcome::rejected;
  verdict.stage(StageName::extract).status = StageStatus::passed;
  auto& static_stage = verdict.stage(StageName::static_analysis);
  static_stage.status = StageStatus::failed;
  static_stage.summary = "no kernel launched";
  static_stage.findings.push_back(rules::Finding{"triton-kernel-launched", rules::Severity::reject,
                                                 "no kernel", source::SourceLocation{3, 7}});
  const auto document = to_json(verdict);
  EXPECT_EQ(document["failed_stage"], "static");
  EXPECT_FALSE(document["accepted"].get<bool>());
  EXPECT_EQ(document["summary"], "rejected at static: no kernel launched");
  const auto& finding = document["stages"][1]["findings"][0];
  EXPECT_EQ(finding["rule"], "triton-kernel-launched");
  EXPECT_EQ(finding["severity"], "reject");
  EXPECT_EQ(finding["line"], 3);
  EXPECT_EQ(finding["column"], 7);
  EXPECT_EQ(exit_code(verdict), 1);
}

TEST(Verdict, AcceptedCarriesTheSpeedup) {
  auto verdict = Verdict::with_all_stages_pending();
  for (auto& stage : verdict.stages) {
    stage.status = StageStatus::passed;
  }
  verdict.stage(StageName::performance).summary = "speedup 2.00x";
  verdict.outcome = Outcome::accepted;
  verdict.speedup = 2.0;
  const auto document = to_json(verdict);
  EXPECT_TRUE(document["accepted"].get<bool>());
  EXPECT_DOUBLE_EQ(document["speedup"].get<double>(), 2.0);
  EXPECT_TRUE(document["failed_stage"].is_null());
  EXPECT_TRUE(document["error"].is_null());
  EXPECT_EQ(exit_code(verdict), 0);
}

TEST(Verdict, ErrorCarriesKindAndMessageAndExitsTwo) {
  auto verdict = Verdict::with_all_stages_pending();
  verdict.outcome = Outcome::error;
  verdict.error = EvaluationError{"usage", "problem file x.py does not exist"};
  const auto document = to_json(verdict);
  EXPECT_EQ(document["error"]["kind"], "usage");
  EXPECT_EQ(document["summary"], "error (usage): problem file x.py does not exist");
  EXPECT_TRUE(document["speedup"].is_null());
  EXPECT_EQ(exit_code(verdict), 2);
}

TEST(Verdict, JsonRoundTripsThroughText) {
  auto verdict = Verdict::with_all_stages_pending();
  verdict.stage(StageName::correctness).details["trials"] = nlohmann::json::array({{{"trial", 0}}});
  const auto text = to_json(verdict).dump();
  const auto parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed["stages"][3]["details"]["trials"][0]["trial"], 0);
}

}  // namespace
}  // namespace kforge::verify
