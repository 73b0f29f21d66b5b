#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "problem/sample_set.hpp"

namespace kforge::problem {
namespace {

namespace fs = std::filesystem;

class SampleSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kforge-samples-test-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "suite" / "01_add");
    write(root_ / "suite" / "01_add" / "problem.py", "# problem");
    write(root_ / "suite" / "01_add" / "solution.py", "# solution");
    fs::create_directories(root_ / "kb" / "KernelBench" / "level1");
    write(root_ / "kb" / "KernelBench" / "level1" / "19_ReLU.py", "# relu");
    write(root_ / "kb" / "KernelBench" / "level1" / "2_Matmul.py", "# matmul");
  }
  void TearDown() override { fs::remove_all(root_); }
  static void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
  fs::path root_;
};

TEST_F(SampleSetTest, ReadsEveryLineAndTurnsBadOnesIntoErrors) {
  write(root_ / "samples.jsonl",
        R"({"problem": "01_add", "completion": "```python\nx = 1\n```", "sample_id": 3, "step": 7}
{"problem": "01_add", "candidate": "cand.py"}

{"problem": "missing", "code": "x = 1"}
{"problem": "01_add", "code": "a", "completion": "b"}
not json
)");
  const auto catalog = ProblemCatalog::from_folder(root_ / "suite");
  const auto samples = load_samples_jsonl(root_ / "samples.jsonl", catalog);
  ASSERT_EQ(samples.size(), 5U) << "a blank line is skipped, every other line gets a result";
  EXPECT_FALSE(samples[0].error);
  EXPECT_EQ(samples[0].problem, "01_add");
  EXPECT_EQ(samples[0].tags["sample_id"], 3);
  EXPECT_EQ(samples[0].tags["step"], 7) << "extra fields travel as tags";
  EXPECT_TRUE(samples[0].candidate_text);
  EXPECT_EQ(*samples[1].candidate_path, root_ / "cand.py") << "paths are relative to the JSONL file";
  ASSERT_TRUE(samples[2].error);
  EXPECT_NE(samples[2].error->find("unknown problem 'missing'"), std::string::npos) << *samples[2].error;
  ASSERT_TRUE(samples[3].error);
  EXPECT_NE(samples[3].error->find("exactly one"), std::string::npos);
  ASSERT_TRUE(samples[4].error);
  EXPECT_NE(samples[4].error->find("line 6"), std::string::npos) << *samples[4].error;
}

TEST_F(SampleSetTest, KernelBenchCheckoutAndRunLayout) {
  const auto catalog = ProblemCatalog::from_kernelbench(root_ / "kb", 1);
  ASSERT_EQ(catalog.entries().size(), 2U);
  EXPECT_EQ(catalog.entries().front().name, "2_Matmul") << "ordered by problem id";
  ASSERT_NE(catalog.find("19"), nullptr);
  EXPECT_EQ(catalog.find("19")->name, "19_ReLU");
  fs::create_directories(root_ / "run");
  write(root_ / "run" / "level_1_problem_19_sample_0_kernel.py", "# a");
  write(root_ / "run" / "level_1_problem_19_sample_1_kernel.py", "# b");
  write(root_ / "run" / "level_1_problem_77_sample_0_kernel.py", "# unknown problem");
  write(root_ / "run" / "level_2_problem_19_sample_0_kernel.py", "# other level");
  write(root_ / "run" / "notes.txt", "ignored");
  const auto samples = load_kernelbench_run(root_ / "run", catalog, 1);
  ASSERT_EQ(samples.size(), 3U);
  EXPECT_EQ(samples[0].problem, "19_ReLU");
  EXPECT_EQ(samples[1].tags["sample_id"], 1);
  EXPECT_TRUE(samples[2].error) << "problem 77 is not in level 1";
  EXPECT_THROW(ProblemCatalog::from_kernelbench(root_ / "kb", 9), std::runtime_error);
}

TEST_F(SampleSetTest, SuiteSolutionsAreSamples) {
  const auto samples = reference_solutions(ProblemCatalog::from_folder(root_ / "suite"));
  ASSERT_EQ(samples.size(), 1U);
  EXPECT_EQ(*samples[0].candidate_path, root_ / "suite" / "01_add" / "solution.py");
  EXPECT_THROW(ProblemCatalog::from_folder(root_ / "run-missing"), std::runtime_error);
}

}  // namespace
}  // namespace kforge::problem
