#include <gtest/gtest.h>

#include "report/batch_metrics.hpp"

namespace kforge::report {
namespace {

SampleResult result(const std::string& problem, bool correct, std::optional<double> speedup,
                    bool compiled = true) {
  return {problem, correct ? "accepted" : "rejected", compiled, correct, speedup};
}

TEST(PassAtK, MatchesTheUnbiasedEstimator) {
  EXPECT_DOUBLE_EQ(pass_at_k(10, 0, 1), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(10, 10, 1), 1.0);
  EXPECT_NEAR(pass_at_k(10, 3, 1), 0.3, 1e-12);
  // 1 - C(7,5)/C(10,5) = 1 - 21/252
  EXPECT_NEAR(pass_at_k(10, 3, 5), 1.0 - 21.0 / 252.0, 1e-12);
  EXPECT_DOUBLE_EQ(pass_at_k(4, 1, 4), 1.0);
}

TEST(BatchMetrics, FastPCountsCorrectAndFasterOverAllSamples) {
  const auto metrics = compute_metrics({result("a", true, 2.5), result("a", true, 0.9),
                                        result("b", false, {}), result("b", false, {}, false)});
  EXPECT_DOUBLE_EQ(metrics.compile_rate, 0.75);
  EXPECT_DOUBLE_EQ(metrics.correct_rate, 0.5);
  EXPECT_DOUBLE_EQ(*metrics.fast_p.at("fast_0"), 0.5);
  EXPECT_DOUBLE_EQ(*metrics.fast_p.at("fast_0.8"), 0.5);
  EXPECT_DOUBLE_EQ(*metrics.fast_p.at("fast_1"), 0.25);
  EXPECT_DOUBLE_EQ(*metrics.fast_p.at("fast_2"), 0.25);
  EXPECT_NEAR(*metrics.geomean_speedup, std::sqrt(2.5 * 0.9), 1e-12);
  EXPECT_NEAR(metrics.pass_at_k.at("pass@1"), (1.0 + 0.0) / 2.0, 1e-12);
  EXPECT_EQ(metrics.pass_at_k.count("pass@2"), 1U) << "k up to the fewest samples of a problem";
}

TEST(BatchMetrics, WithoutTimingsFastPAboveZeroIsUnknownNotZero) {
  const auto metrics = compute_metrics({result("a", true, {}), result("b", false, {})});
  EXPECT_DOUBLE_EQ(*metrics.fast_p.at("fast_0"), 0.5);
  EXPECT_FALSE(metrics.fast_p.at("fast_1").has_value());
  EXPECT_FALSE(metrics.geomean_speedup.has_value());
}

TEST(BatchMetrics, AnErrorIsLeftOutOfEveryRateNotCountedAsARejection) {
  const SampleResult error{"b", "error", false, false, {}};
  const auto metrics =
      compute_metrics({result("a", true, 2.0), result("a", false, {}), error, result("c", false, {}), error});
  EXPECT_EQ(metrics.samples, 5U);
  EXPECT_EQ(metrics.errors, 2U);
  EXPECT_EQ(metrics.judged, 3U);
  EXPECT_NEAR(metrics.correct_rate, 1.0 / 3.0, 1e-12) << "errors are not in the denominator";
  EXPECT_NEAR(metrics.compile_rate, 1.0, 1e-12);
  // Problem b has only errors: it says nothing about pass@1, which averages a (0.5) and c (0).
  EXPECT_NEAR(metrics.pass_at_k.at("pass@1"), 0.25, 1e-12);
}

TEST(BatchMetrics, OnlyErrorsGiveNoRates) {
  const auto metrics = compute_metrics({{"a", "error", false, false, {}}});
  EXPECT_EQ(metrics.judged, 0U);
  EXPECT_TRUE(metrics.pass_at_k.empty());
  EXPECT_FALSE(metrics.fast_p.at("fast_0").has_value()) << "no judged sample: unknown, not 0%";
  // A batch whose every evaluation errored still prints its summary (it used to throw map::at).
  const auto text = metrics.render();
  EXPECT_NE(text.find("1 evaluation error(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("fast_1"), std::string::npos) << text;
  EXPECT_NO_THROW(BatchMetrics{}.render());
}

TEST(BatchMetrics, ReadsAVerdictDocument) {
  const nlohmann::json verdict = {
      {"outcome", "accepted"}, {"speedup", 1.7}, {"stages", {{{"name", "compile"}, {"status", "passed"}}}}};
  const auto sample = sample_result("p", verdict);
  EXPECT_TRUE(sample.compiled);
  EXPECT_TRUE(sample.correct);
  EXPECT_DOUBLE_EQ(*sample.speedup, 1.7);
  EXPECT_FALSE(sample_result("p", {{"outcome", "error"}}).compiled);
}

}  // namespace
}  // namespace kforge::report
