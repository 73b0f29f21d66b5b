// The inductor teacher's process boundary: whatever goes wrong in the worker comes back as an answer
// with a stage and a reason, never as an exception, and collect_sft always gets n samples.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "data/inductor_teacher.hpp"

namespace kforge::data {
namespace {

InductorTeacherSettings without_python() {
  InductorTeacherSettings settings;
  settings.python = std::filesystem::path("/nonexistent/kforge-test/python3");
  settings.timeout_s = 30;
  return settings;
}

TEST(InductorTeacher, AWorkerThatCannotStartGivesAnAnswerNotAnException) {
  const auto answer = inductor_candidate("problem.py", "p", without_python());
  EXPECT_TRUE(answer.candidate.empty());
  EXPECT_FALSE(answer.stage.empty());
  EXPECT_NE(answer.error.find("inductor teacher"), std::string::npos) << answer.error;
}

TEST(InductorTeacher, GivesOneSamplePerProblemAndSaysWhyThereAreNoMore) {
  const auto teacher = inductor_teacher(without_python());
  SftProblem problem;
  problem.entry.name = "p";
  problem.entry.problem = "problem.py";
  const auto samples = teacher(problem, 3);
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_EQ(samples[0].error.rfind("inductor ", 0), 0U) << samples[0].error;
  EXPECT_NE(samples[1].error.find("deterministic"), std::string::npos);
  EXPECT_TRUE(teacher(problem, 0).empty());
}

TEST(InductorTeacher, WithoutAGpuItNeedsCapturesMadeOnOne) {
  EXPECT_EQ(inductor_teacher_problem("cuda:0", ""), "");
  const auto problem = inductor_teacher_problem("cpu", "");
  EXPECT_NE(problem.find("needs a GPU"), std::string::npos) << problem;
  EXPECT_NE(problem.find("--captures"), std::string::npos) << problem;
  const auto folder = std::filesystem::temp_directory_path() / "kforge-test-captures";
  std::filesystem::create_directories(folder);
  EXPECT_NE(inductor_teacher_problem("cpu", folder).find("holds no captures"), std::string::npos);
  std::ofstream(folder / "01_scaled_add.small.capture.json") << "{}";
  EXPECT_EQ(inductor_teacher_problem("cpu", folder), "");
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace kforge::data
