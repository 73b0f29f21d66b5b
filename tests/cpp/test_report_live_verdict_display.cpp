#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "report/live_verdict_display.hpp"
#include "report/terminal_report.hpp"

namespace kforge::report {
namespace {

verify::StageResult passed(verify::StageName name, const std::string& summary) {
  verify::StageResult stage;
  stage.name = name;
  stage.status = verify::StageStatus::passed;
  stage.summary = summary;
  return stage;
}

TEST(LiveVerdictDisplay, PrintsEachStageAsItFinishesThenOnlyWhatIsLeft) {
  std::ostringstream out;
  {
    LiveVerdictDisplay display(out, false);
    display.start("p.py", "c.py", {"sizes    small"});
    EXPECT_EQ(out.str(), "problem   p.py\ncandidate c.py\nsizes    small\n");
    display.stage_finished(passed(verify::StageName::extract, "plain Python source"));
    display.progress(verify::StageName::static_analysis, "parsing");  // not a terminal: no progress line
    EXPECT_EQ(out.str(),
              "problem   p.py\ncandidate c.py\nsizes    small\n  PASS extract      plain Python source\n");
    auto verdict = verify::Verdict::with_all_stages_pending();
    verdict.stage(verify::StageName::extract) = passed(verify::StageName::extract, "plain Python source");
    auto& failed = verdict.stage(verify::StageName::static_analysis);
    failed.status = verify::StageStatus::failed;
    failed.summary = "no kernel";
    display.stage_finished(failed);
    verdict.outcome = verify::Outcome::rejected;
    display.finish(verify::to_json(verdict));
  }
  const auto text = out.str();
  EXPECT_EQ(text.find("extract"), text.rfind("extract")) << "a stage is printed once:\n" << text;
  EXPECT_NE(text.find("  FAIL static       no kernel\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  ---- performance"), std::string::npos) << text;
  EXPECT_NE(text.find("REJECTED"), std::string::npos) << text;
}

TEST(LiveVerdictDisplay, OnATerminalTheProgressLineIsRedrawnAndClearedBeforeTheNextStage) {
  std::ostringstream out;
  {
    LiveVerdictDisplay display(out, true);
    display.progress(verify::StageName::correctness, "trial 2/5");
    display.stage_finished(passed(verify::StageName::correctness, "5/5 trials passed"));
  }
  const auto text = out.str();
  const auto progress = text.find("correctness  trial 2/5");
  const auto cleared = text.find("\r\033[K", progress);
  const auto stage = text.find("5/5 trials passed");
  ASSERT_NE(progress, std::string::npos) << text;
  EXPECT_LT(progress, cleared);
  EXPECT_LT(cleared, stage);
}

TEST(TerminalReport, AnEvaluationThatNeverStartedShowsNoStageTable) {
  auto verdict = verify::Verdict::with_all_stages_pending();
  verdict.error = verify::EvaluationError{"usage", "candidate file nope.py does not exist"};
  const auto text = render_terminal(verify::to_json(verdict), false);
  EXPECT_EQ(text.find("not run"), std::string::npos) << text;
  EXPECT_NE(text.find("nope.py does not exist"), std::string::npos) << text;
}

}  // namespace
}  // namespace kforge::report
