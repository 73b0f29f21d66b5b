#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "report/tritonbench_report.hpp"

namespace kforge::report {
namespace {

nlohmann::json verdict(const char* outcome, std::optional<double> speedup) {
  nlohmann::json stages = nlohmann::json::array();
  stages.push_back({{"name", "static"}, {"status", "passed"}});
  stages.push_back({{"name", "compile"}, {"status", "passed"}});
  stages.push_back(
      {{"name", "correctness"}, {"status", std::string(outcome) == "accepted" ? "passed" : "failed"}});
  return {{"schema", "kforge.verdict/1"},
          {"outcome", outcome},
          {"accepted", std::string(outcome) == "accepted"},
          {"failed_stage",
           std::string(outcome) == "accepted" ? nlohmann::json(nullptr) : nlohmann::json("correctness")},
          {"speedup", speedup ? nlohmann::json(*speedup) : nlohmann::json(nullptr)},
          {"stages", stages}};
}

TritonBenchRow row(const char* name, bool call, bool exec, nlohmann::json judged,
                   std::optional<double> efficiency = std::nullopt) {
  TritonBenchRow result;
  result.name = name;
  result.call = call;
  result.exec = exec;
  result.verdict = std::move(judged);
  result.efficiency = efficiency;
  return result;
}

TEST(TritonBenchReport, AnAcceptedVerdictOfAnAnswerThatFailsTheItemsOwnTestBlockIsARejection) {
  auto differs = row("differs", true, false, verdict("accepted", 1.5));
  differs.exec_reason = "values['test_case_0']: 2 of 10 elements differ";
  hold_to_the_test_block(differs);
  EXPECT_EQ(differs.verdict["outcome"], "rejected");
  EXPECT_FALSE(differs.verdict["accepted"].get<bool>());
  EXPECT_EQ(differs.verdict["failed_stage"], "test-block");
  EXPECT_TRUE(differs.verdict["speedup"].is_null());
  EXPECT_EQ(differs.verdict["stages"].back()["name"], "test-block");
  EXPECT_NE(differs.verdict["summary"].get<std::string>().find(
                "its values differ from the gold's: values['test_case_0']"),
            std::string::npos);

  auto fails = row("fails", false, false, verdict("accepted", 1.5));
  fails.call_error = "run: AssertionError: p must be in [0, 1)";
  hold_to_the_test_block(fails);
  EXPECT_NE(
      fails.verdict["summary"].get<std::string>().find("it fails the item's test block: run: AssertionError"),
      std::string::npos);

  auto right = row("right", true, true, verdict("accepted", 1.5));
  auto wrong = row("wrong", true, false, verdict("rejected", std::nullopt));
  const auto right_before = right.verdict;
  const auto wrong_before = wrong.verdict;
  hold_to_the_test_block(right);
  hold_to_the_test_block(wrong);
  EXPECT_EQ(right.verdict, right_before);
  EXPECT_EQ(wrong.verdict, wrong_before) << "a rejection keeps its own stage and reason";
  EXPECT_EQ(tritonbench_metrics({differs, fails, right, wrong}).accepted, 1U);
}

TEST(TritonBenchReport, SpeedupAndEfficiencyCountOnlyExecutionAccurateAcceptedAnswers) {
  const std::vector<TritonBenchRow> rows{
      row("a", true, true, verdict("accepted", 2.0), 0.5),
      row("b", true, true, verdict("accepted", 0.5), 0.25),
      // Execution-accurate by TritonBench's test but rejected by kforge (a torch call): no speedup.
      row("c", true, true, verdict("rejected", std::nullopt), 0.9),
      row("d", true, false, verdict("rejected", std::nullopt)),
      row("e", false, false, nullptr),
  };
  const auto metrics = tritonbench_metrics(rows);
  EXPECT_EQ(metrics.answers, 5U);
  EXPECT_EQ(metrics.calls, 4U);
  EXPECT_EQ(metrics.execs, 3U);
  EXPECT_EQ(metrics.accepted, 2U);
  EXPECT_EQ(metrics.speedups, 2U);
  EXPECT_DOUBLE_EQ(*metrics.speedup_mean, 1.25);
  EXPECT_DOUBLE_EQ(*metrics.speedup_geomean, 1.0);
  EXPECT_EQ(metrics.efficiencies, 2U);
  EXPECT_DOUBLE_EQ(*metrics.efficiency_mean, 0.375);

  const auto document = tritonbench_report_json(rows, "G", "cuda:0");
  EXPECT_DOUBLE_EQ(document["tritonbench"]["call_accuracy"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(document["tritonbench"]["execution_accuracy"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(document["kforge"]["accepted_rate"].get<double>(), 0.4);
  EXPECT_EQ(document["items"].size(), 5U);
  const auto text = render_tritonbench_report(rows, "G", "cuda:0");
  EXPECT_NE(text.find("call accuracy       80.0% (4/5)"), std::string::npos) << text;
  EXPECT_NE(text.find("2.00x"), std::string::npos) << text;
}

TEST(TritonBenchReport, NoAnswersMeansNoRates) {
  const auto document = tritonbench_report_json({}, "T", "cpu");
  EXPECT_TRUE(document["tritonbench"]["call_accuracy"].is_null());
  EXPECT_TRUE(document["tritonbench"]["speedup"].is_null());
}

TEST(TritonBenchReport, EfficiencyIsTheLargerTimeWeightedFractionOfTheRoofline) {
  const auto kernels = nlohmann::json::parse(R"([
    {"total_seconds": 3.0, "roofline": {"dram_fraction": 0.8, "compute_fraction": 0.1}},
    {"total_seconds": 1.0, "roofline": {"dram_fraction": 0.0, "compute_fraction": 0.9}},
    {"total_seconds": 5.0, "roofline": null}
  ])");
  EXPECT_DOUBLE_EQ(*profile_efficiency(kernels), 0.6);  // DRAM (2.4) over compute (1.2), over 4 s
  EXPECT_FALSE(profile_efficiency(nlohmann::json::array()).has_value());
}

}  // namespace
}  // namespace kforge::report
