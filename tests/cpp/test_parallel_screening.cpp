#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "schedule/parallel_screening.hpp"
#include "test_file_text.hpp"
#include "verify/eval_pipeline.hpp"

namespace kforge::schedule {
namespace {

namespace fs = std::filesystem;

const fs::path kStarter = fs::path(KFORGE_SOURCE_DIR) / "problems" / "starter" / "05_layernorm";

EvalJob job(std::size_t index, std::string candidate) {
  EvalJob job;
  job.index = index;
  job.problem = "05_layernorm";
  job.settings.problem_path = kStarter / "problem.py";
  job.settings.candidate_path = "<inline>";
  job.settings.candidate_text = std::move(candidate);
  return job;
}

// The honest solution, and variants that extract or the static rules reject, mixed.
std::vector<EvalJob> mixed_jobs(std::size_t count) {
  const std::string solution = test_support::file_text(kStarter / "solution.py");
  std::vector<EvalJob> jobs;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string marker = "\n# " + std::to_string(i) + "\n";
    switch (i % 4) {
      case 0:
        jobs.push_back(job(i, solution + marker));
        break;
      case 1:
        jobs.push_back(job(i, "import subprocess\n" + solution + marker));
        break;
      case 2:
        jobs.push_back(job(i, "no code here" + marker));
        break;
      default:
        jobs.push_back(job(i, solution + "\nexec('import os')" + marker));
        break;
    }
  }
  return jobs;
}

// A verdict without its durations, the only fields that differ between two screenings.
nlohmann::json comparable(const verify::Verdict& verdict) {
  auto document = verify::to_json(verdict);
  document.erase("duration_s");
  for (auto& stage : document["stages"]) {
    stage.erase("duration_s");
  }
  return document;
}

// The verdicts of screening each job alone, for comparison.
std::vector<std::optional<nlohmann::json>> alone(const std::vector<EvalJob>& jobs) {
  std::vector<std::optional<nlohmann::json>> verdicts;
  for (const auto& job : jobs) {
    auto settings = job.settings;
    settings.device = "cpu";
    const auto verdict = verify::screen(settings);
    verdicts.push_back(verdict ? std::optional(comparable(*verdict)) : std::nullopt);
  }
  return verdicts;
}

TEST(ParallelScreening, GivesEachJobTheVerdictScreeningItAloneGives) {
  ASSERT_TRUE(fs::exists(kStarter / "solution.py"));
  const auto jobs = mixed_jobs(13);  // more jobs than 8 threads, fewer than 64
  const auto expected = alone(jobs);
  for (const std::size_t threads : {1U, 2U, 8U, 64U}) {
    const auto screened = screen_in_parallel(jobs, "cpu", threads);
    ASSERT_EQ(screened.size(), jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      ASSERT_EQ(screened[i].has_value(), expected[i].has_value())
          << "job " << i << " on " << threads << " threads";
      if (expected[i]) {
        EXPECT_EQ(comparable(*screened[i]), *expected[i]) << "job " << i;
      }
    }
    EXPECT_FALSE(screened[0].has_value()) << "the honest solution goes on to the workers";
    ASSERT_TRUE(screened[1].has_value() && screened[2].has_value());
    EXPECT_EQ(verify::to_json(*screened[1])["failed_stage"], "static");
    EXPECT_EQ(verify::to_json(*screened[2])["failed_stage"], "extract");
  }
}

TEST(ParallelScreening, NoJobsGiveNoVerdicts) { EXPECT_TRUE(screen_in_parallel({}, "cpu", 4).empty()); }

TEST(ParallelScreening, AnUnreadableProblemLeavesTheJobToTheFullEvaluation) {
  auto missing = job(0, "import subprocess\nclass ModelNew:\n    pass\n");
  missing.settings.problem_path = kStarter / "no-such-problem.py";
  const auto screened = screen_in_parallel({missing, missing}, "cpu", 2);
  ASSERT_EQ(screened.size(), 2U);
  auto settings = missing.settings;
  settings.device = "cpu";
  const auto alone = verify::screen(settings);
  for (const auto& verdict : screened) {
    ASSERT_EQ(verdict.has_value(), alone.has_value());
    if (alone) {
      EXPECT_EQ(comparable(*verdict), comparable(*alone));
    }
  }
}

TEST(ScreeningPool, ConcurrentSubmissionsEachGetTheirOwnVerdictsInOrder) {
  const auto jobs = mixed_jobs(10);
  const auto expected = alone(jobs);
  for (const std::size_t helpers : {0U, 1U, 3U}) {
    ScreeningPool pool(helpers);
    // Callers of different sizes at once, several rounds each: batches interleave on the helpers.
    std::vector<std::vector<std::optional<nlohmann::json>>> got(4);
    {
      std::vector<std::jthread> callers;
      for (std::size_t caller = 0; caller < got.size(); ++caller) {
        callers.emplace_back([&, caller] {
          const std::vector<EvalJob> mine(jobs.begin(), jobs.begin() + static_cast<long>(caller * 3 + 1));
          for (int round = 0; round < 3; ++round) {
            const auto screened = pool.screen(mine, "cpu");
            got[caller].clear();
            for (const auto& verdict : screened) {
              got[caller].push_back(verdict ? std::optional(comparable(*verdict)) : std::nullopt);
            }
          }
        });
      }
    }
    for (std::size_t caller = 0; caller < got.size(); ++caller) {
      ASSERT_EQ(got[caller].size(), caller * 3 + 1) << helpers << " helpers";
      for (std::size_t i = 0; i < got[caller].size(); ++i) {
        EXPECT_EQ(got[caller][i], expected[i])
            << "caller " << caller << ", job " << i << ", " << helpers << " helpers";
      }
    }
  }
}

TEST(ScreeningPool, AnIdlePoolStopsAndAnEmptySubmissionIsAnswered) {
  ScreeningPool pool(2);
  EXPECT_TRUE(pool.screen({}, "cpu").empty());
  EXPECT_GE(default_screening_threads(), 1U);
  EXPECT_LE(default_screening_threads(), 8U);
}

}  // namespace
}  // namespace kforge::schedule
