#include <gtest/gtest.h>

#include <string>

#include "optimize/optimize_report.hpp"

namespace kforge::optimize {
namespace {

OptimizeRun two_round_run() {
  OptimizeRun run;
  run.problem = "problems/baseline/07_matmul_fp16/problem.py";
  run.from = "solution.py";
  run.search.knobs.push_back(Knob{"BLOCK_N",
                                  KnobKind::block_size,
                                  "class attribute ModelNew.BLOCK_N at 70:5",
                                  {"matmul_kernel"},
                                  {70, 15},
                                  "32",
                                  32,
                                  {16, 32, 64, 128},
                                  {},
                                  {},
                                  KnobSite::literal});
  run.outcome.baseline_ms = 1.6;
  run.outcome.best_ms = 0.8;
  run.outcome.best_values = {128};
  run.outcome.best_ms_after_round = {1.6, 0.8};
  run.outcome.stop_reason = "the budget of 4 evaluations is used";
  run.proposers = {"tune", "llm"};
  run.outcome.evaluations = 4;
  run.outcome.attempts = {
      {0, "tune", {32}, "", "", Measurement::final, {true, 1.6, "accepted"}},
      {1,
       "tune",
       {64},
       "",
       "",
       Measurement::screening,
       {false, std::nullopt, "rejected at correctness: <mismatch> & more"}},
      {1, "tune", {128}, "", "", Measurement::final, {true, 0.8, "accepted"}},
      {2,
       "llm",
       {},
       "Fuse the <epilogue>",
       "class ModelNew: ...\n",
       Measurement::final,
       {true, 0.9, "accepted"}},
      {2, "llm", {}, "", "", Measurement::final, {false, std::nullopt, "no reply: HTTP 500"}}};
  run.profile_before = {{"fraction_of_roofline", 0.12},
                        {"kernels",
                         {{{"name", "matmul_kernel"},
                           {"roofline", {{"bound", "compute-bound"}, {"fraction_of_roofline", 0.12}}},
                           {"diagnosis", {"tensor cores at 12%"}}}}}};
  return run;
}

TEST(OptimizeReport, SaysWhatChangedPerRoundAndKeepsEveryAttempt) {
  const auto report = optimize_report(two_round_run());
  EXPECT_EQ(report["schema"], "kforge.optimize/1");
  EXPECT_DOUBLE_EQ(report["speedup_over_start"].get<double>(), 2.0);
  EXPECT_EQ(report["speedup_per_round"], nlohmann::json({1.0, 2.0}));
  EXPECT_EQ(report["knobs"][0]["start"], 32);
  EXPECT_EQ(report["knobs"][0]["best"], 128);
  EXPECT_EQ(report["attempts"].size(), 5U);
  EXPECT_EQ(report["proposers"], nlohmann::json({"tune", "llm"}));
  EXPECT_EQ(report["evaluations"], 4) << "a reply without code costs no verdict";
  EXPECT_EQ(report["attempts"][3]["proposer"], "llm");
  EXPECT_EQ(report["attempts"][3]["file"], "attempts/round-2-1.py") << "the source lives beside the report";
  EXPECT_EQ(report["attempts"][3]["idea"], "Fuse the <epilogue>");
  EXPECT_TRUE(report["attempts"][4]["file"].is_null()) << "no source, no file";
  EXPECT_TRUE(report["attempts"][0]["file"].is_null()) << "a tuner attempt is rebuilt from its values";
  EXPECT_FALSE(report["attempts"][1]["accepted"].get<bool>());
  EXPECT_TRUE(report["attempts"][1]["ms"].is_null());
  EXPECT_DOUBLE_EQ(report["roofline_before"].get<double>(), 0.12);
  EXPECT_TRUE(report["roofline_after"].is_null()) << "not profiled after";
  const auto text = render_report_text(report);
  EXPECT_NE(text.find("32 -> 128"), std::string::npos) << text;
  EXPECT_NE(text.find("2.00x the start"), std::string::npos) << text;
}

TEST(OptimizeReport, TheHtmlPageIsSelfContainedAndEscapesVerdictText) {
  const auto html = render_report_html(optimize_report(two_round_run()));
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0U);
  EXPECT_NE(html.find("<svg"), std::string::npos) << "the speedup chart is inline";
  EXPECT_NE(html.find("&lt;mismatch&gt; &amp; more"), std::string::npos) << "verdict text is escaped";
  EXPECT_EQ(html.find("<mismatch>"), std::string::npos);
  EXPECT_NE(html.find("Fuse the &lt;epilogue&gt;"), std::string::npos) << "an LLM's idea is escaped";
  EXPECT_NE(html.find("href=\"attempts/round-2-1.py\""), std::string::npos)
      << "the attempt's source is linked";
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos) << "nothing is fetched";
  EXPECT_NE(html.find("compute-bound"), std::string::npos);
  EXPECT_NE(html.find("not profiled"), std::string::npos);
}

TEST(OptimizeReport, EachAttemptGetsOneLineWithWhatChangedAndItsVerdict) {
  Knob block;
  block.name = "BLOCK";
  block.value = 128;
  Knob warps;
  warps.name = "num_warps";
  warps.value = 4;
  const SearchAttempt tune{1,
                           "tune",
                           {256, 4},
                           {},
                           {},
                           Measurement::screening,
                           ProposalResult{true, std::nullopt, "accepted: correct; skipped: no GPU"}};
  EXPECT_EQ(render_attempt_line(tune, {block, warps}),
            "  round 1 · tune · BLOCK=256 → accepted: correct; skipped: no GPU\n");
  const SearchAttempt start{0,
                            "tune",
                            {128, 4},
                            {},
                            {},
                            Measurement::final,
                            ProposalResult{true, 0.25, "accepted: correct, speedup 1.1x"}};
  EXPECT_EQ(render_attempt_line(start, {block, warps}),
            "  round 0 · tune · the start (0.25 ms) → accepted: correct, speedup 1.1x\n");
  const SearchAttempt llm{2,
                          "llm",
                          {},
                          "Fuse the epilogue",
                          "code",
                          Measurement::final,
                          ProposalResult{false, std::nullopt, "rejected at static: no launch"}};
  EXPECT_EQ(render_attempt_line(llm, {}),
            "  round 2 · llm · Fuse the epilogue → rejected at static: no launch\n");
}

}  // namespace
}  // namespace kforge::optimize
