#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rules/static_analysis.hpp"
#include "source/code_extraction.hpp"
#include "test_file_text.hpp"

// Honest code must pass static analysis under the strict profile: the reference solutions of
// every problem, the honest candidates of tests/candidates and every file of tests/corpus/honest/
// (globbed when the test runs, so new corpus files are covered without touching this test).
namespace kforge::rules {
namespace {

namespace fs = std::filesystem;

const fs::path kRepository{KFORGE_SOURCE_DIR};

// Every reject finding (and a syntax error) of `candidate`, as readable lines; empty when clean.
std::vector<std::string> rejections(const fs::path& candidate, const std::string& problem_source) {
  const source::ExtractionResult extracted = source::extract_code(test_support::file_text(candidate));
  if (!extracted.ok()) {
    return {"no code extracted: " + extracted.error};
  }
  const StaticReport report = analyse_candidate(extracted.code->code, Profile::strict, problem_source);
  std::vector<std::string> lines;
  if (report.syntax_error) {
    lines.push_back("syntax error at " + source::to_string(report.syntax_error->location) + ": " +
                    report.syntax_error->message);
  }
  for (const Finding& finding : report.findings) {
    if (finding.severity == Severity::reject) {
      lines.push_back(source::to_string(finding.location) + " [" + finding.rule_id + "] " + finding.message);
    }
  }
  return lines;
}

void expect_accepted(const fs::path& candidate, const std::string& problem_source) {
  SCOPED_TRACE(candidate.string());
  const std::vector<std::string> lines = rejections(candidate, problem_source);
  std::string joined;
  for (const std::string& line : lines) {
    joined += "\n  " + line;
  }
  EXPECT_TRUE(lines.empty()) << candidate.lexically_relative(kRepository).string()
                             << " was rejected:" << joined;
}

std::string problem_source_of(const std::string& problem) {
  for (const fs::path& path : {kRepository / "problems" / problem / "problem.py",
                               kRepository / "problems" / problem, kRepository / problem}) {
    if (fs::is_regular_file(path)) {
      return test_support::file_text(path);
    }
  }
  return {};
}

// Problem named for each corpus candidate by tests/corpus/manifest.json ("candidate" relative to
// tests/corpus, "problem" like "starter/04_softmax"); missing or unreadable entries give none.
std::map<std::string, std::string> corpus_problems(const fs::path& corpus) {
  std::map<std::string, std::string> problems;
  const fs::path manifest_path = corpus / "manifest.json";
  if (!fs::is_regular_file(manifest_path)) {
    return problems;
  }
  const nlohmann::json manifest =
      nlohmann::json::parse(test_support::file_text(manifest_path), nullptr, false);
  const nlohmann::json* entries = &manifest;
  if (manifest.is_object()) {
    for (const char* key : {"entries", "cases", "candidates"}) {
      if (manifest.contains(key)) {
        entries = &manifest[key];
        break;
      }
    }
  }
  if (!entries->is_array()) {
    return problems;
  }
  for (const nlohmann::json& entry : *entries) {
    if (entry.is_object() && entry.contains("candidate") && entry.contains("problem") &&
        entry["candidate"].is_string() && entry["problem"].is_string()) {
      problems.emplace(fs::path(entry["candidate"].get<std::string>()).lexically_normal().generic_string(),
                       entry["problem"].get<std::string>());
    }
  }
  return problems;
}

TEST(HonestSources, ReferenceSolutionsOfEveryProblem) {
  std::vector<fs::path> solutions;
  for (const fs::directory_entry& suite : fs::directory_iterator(kRepository / "problems")) {
    if (!suite.is_directory()) {
      continue;
    }
    for (const fs::directory_entry& problem : fs::directory_iterator(suite.path())) {
      if (fs::is_regular_file(problem.path() / "solution.py")) {
        solutions.push_back(problem.path());
      }
    }
  }
  std::sort(solutions.begin(), solutions.end());
  ASSERT_GE(solutions.size(), 12U);
  for (const fs::path& problem : solutions) {
    const fs::path problem_file = problem / "problem.py";
    expect_accepted(problem / "solution.py",
                    fs::is_regular_file(problem_file) ? test_support::file_text(problem_file) : "");
  }
}

TEST(HonestSources, HonestCandidates) {
  const fs::path candidates = kRepository / "tests" / "candidates";
  const std::vector<std::pair<const char*, const char*>> honest = {
      {"softmax_autotuned.py", "starter/04_softmax"},
      {"rowsum_two_kernel.py", "starter/03_row_sum"},
      {"layernorm_single_block.py", "starter/05_layernorm"},
      {"llm_response_ok.md", "starter/04_softmax"},
  };
  for (const auto& [file, problem] : honest) {
    ASSERT_TRUE(fs::is_regular_file(candidates / file)) << file;
    expect_accepted(candidates / file, problem_source_of(problem));
  }
}

TEST(HonestSources, HonestCorpus) {
  const fs::path corpus = kRepository / "tests" / "corpus";
  if (!fs::is_directory(corpus / "honest")) {
    GTEST_SKIP() << "tests/corpus/honest does not exist in this checkout";
  }
  const std::map<std::string, std::string> problems = corpus_problems(corpus);
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(corpus / "honest")) {
    const std::string extension = entry.path().extension().string();
    if (entry.is_regular_file() && (extension == ".py" || extension == ".md")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    const std::string key = file.lexically_relative(corpus).generic_string();
    const auto problem = problems.find(key);
    expect_accepted(file, problem == problems.end() ? std::string() : problem_source_of(problem->second));
  }
}

}  // namespace
}  // namespace kforge::rules
