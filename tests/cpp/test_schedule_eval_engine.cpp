#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "schedule/eval_engine.hpp"

namespace kforge::schedule {
namespace {

namespace fs = std::filesystem;

// A problem file the screening can read; the jobs here never reach a judge, so it is never imported.
class EvalEngineScreening : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() /
              ("kforge-engine-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
               "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(folder_ / "demo");
    std::ofstream(folder_ / "demo" / "problem.py")
        << "import torch\nclass Model(torch.nn.Module):\n    pass\n";
  }
  void TearDown() override { fs::remove_all(folder_); }

  EvalJob job(std::size_t index, std::string candidate) const {
    EvalJob job;
    job.index = index;
    job.problem = "demo";
    job.settings.problem_path = folder_ / "demo" / "problem.py";
    job.settings.candidate_path = "<inline>";
    job.settings.candidate_text = std::move(candidate);
    return job;
  }

  static SchedulerOptions options() {
    SchedulerOptions options;
    options.jobs_per_device = 1;
    options.use_zygote = false;
    options.python = "python3";
    return options;
  }

  fs::path folder_;
};

TEST_F(EvalEngineScreening, StaticRejectionsAreAnsweredInsideSubmitWithoutAJudge) {
  EvalEngine engine(options());
  std::vector<std::pair<std::size_t, std::string>> results;
  bool done = false;
  engine.submit(
      {job(0, "no code in this answer"), job(1, "```python\ndef broken(:\n```"),
       job(2, "import subprocess\nclass ModelNew:\n    pass\n")},
      [&](const EvalOutcome& outcome) {
        results.emplace_back(outcome.index, outcome.verdict.value("failed_stage", ""));
      },
      [&] { done = true; });
  ASSERT_TRUE(done) << "every job was decided while it was submitted";
  ASSERT_EQ(results.size(), 3U);
  EXPECT_EQ(results[0], (std::pair<std::size_t, std::string>{0, "extract"}));
  EXPECT_EQ(results[1], (std::pair<std::size_t, std::string>{1, "static"}));
  EXPECT_EQ(results[2], (std::pair<std::size_t, std::string>{2, "static"}));
  const auto counters = engine.counters();
  EXPECT_EQ(counters.screened, 3U);
  EXPECT_EQ(counters.finished, 3U);
  EXPECT_EQ(counters.judge_starts, 0U);
  EXPECT_EQ(counters.queued + counters.running, 0U);
}

TEST_F(EvalEngineScreening, AManyJobSubmissionIsScreenedInsideSubmitAndAnsweredInOrder) {
  EvalEngine engine(options());
  std::vector<EvalJob> jobs;
  for (std::size_t i = 0; i < 64; ++i) {
    jobs.push_back(job(i, i % 2 == 0
                              ? "prose number " + std::to_string(i)
                              : "import subprocess\nclass ModelNew:\n    pass\n# " + std::to_string(i)));
  }
  std::vector<std::pair<std::size_t, std::string>> results;
  bool done = false;
  engine.submit(
      std::move(jobs),
      [&](const EvalOutcome& outcome) {
        results.emplace_back(outcome.index, outcome.verdict.value("failed_stage", ""));
      },
      [&] { done = true; });
  ASSERT_TRUE(done);
  ASSERT_EQ(results.size(), 64U);
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].first, i) << "results come in the submission's order";
    EXPECT_EQ(results[i].second, i % 2 == 0 ? "extract" : "static") << i;
  }
  EXPECT_EQ(engine.counters().screened, 64U);
}

TEST_F(EvalEngineScreening, AMissingProblemFileIsAUsageErrorNotACrash) {
  EvalEngine engine(options());
  auto missing = job(0, "print(1)");
  missing.settings.problem_path = folder_ / "nowhere" / "problem.py";
  nlohmann::json verdict;
  engine.submit({missing}, [&](const EvalOutcome& outcome) { verdict = outcome.verdict; });
  engine.wait_idle();
  EXPECT_EQ(verdict.value("outcome", ""), "error");
  EXPECT_EQ(verdict["error"].value("kind", ""), "usage");
}

TEST_F(EvalEngineScreening, AnEmptySubmissionIsDoneAtOnce) {
  EvalEngine engine(options());
  bool done = false;
  engine.submit(
      {}, [](const EvalOutcome&) { FAIL() << "no job, no result"; }, [&] { done = true; });
  EXPECT_TRUE(done);
  engine.wait_idle();
}

TEST(EvalEngine, RefusesOptionsWithoutDevicesOrSlots) {
  SchedulerOptions options;
  options.python = "python3";
  options.devices.clear();
  EXPECT_THROW(EvalEngine{options}, std::invalid_argument);
  options.devices = {"cpu"};
  options.jobs_per_device = 0;
  EXPECT_THROW(EvalEngine{options}, std::invalid_argument);
}

TEST(EvalEngine, KeepsAJudgeForEveryEvaluationInFlight) {
  // One answer per problem (TritonBench, a KernelBench level): each of the -j evaluations needs a judge.
  SchedulerOptions options;
  options.python = "python3";
  options.use_zygote = false;
  options.jobs_per_device = 12;
  options.sessions_per_device = 8;
  EXPECT_EQ(EvalEngine{options}.counters().judge_room, 12U);
  options.jobs_per_device = 2;
  EXPECT_EQ(EvalEngine{options}.counters().judge_room, 8U);
}

}  // namespace
}  // namespace kforge::schedule
