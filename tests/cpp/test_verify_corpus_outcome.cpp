#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "problem/corpus_manifest.hpp"
#include "verify/corpus_outcome.hpp"
#include "verify/verdict.hpp"

namespace kforge::verify {
namespace {

namespace fs = std::filesystem;

problem::CorpusEntry exploit(const std::string& stage, const std::string& check) {
  problem::CorpusEntry entry;
  entry.exploit_class = "torch-fallback";
  entry.expect_stage = stage;
  entry.expect_check = check;
  return entry;
}

nlohmann::json rejected_at(StageName name, const std::string& rule) {
  auto verdict = Verdict::with_all_stages_pending();
  verdict.outcome = Outcome::rejected;
  verdict.stage(name).status = StageStatus::failed;
  verdict.stage(name).findings.push_back({rule, rules::Severity::reject, "found", {1, 1}});
  return to_json(verdict);
}

TEST(CorpusOutcome, ExploitCaughtOnItsPath) {
  const auto outcome =
      judge_corpus_entry(exploit("runtime", "ghost-replay"), rejected_at(StageName::runtime, "ghost-replay"));
  EXPECT_EQ(outcome.result, CorpusResult::caught);
}

TEST(CorpusOutcome, ExploitCaughtElsewhereIsAWrongPath) {
  EXPECT_EQ(
      judge_corpus_entry(exploit("runtime", "ghost-replay"), rejected_at(StageName::runtime, "input-refresh"))
          .result,
      CorpusResult::wrong_path);
  EXPECT_EQ(
      judge_corpus_entry(exploit("static", "ghost-replay"), rejected_at(StageName::runtime, "ghost-replay"))
          .result,
      CorpusResult::wrong_path);
}

TEST(CorpusOutcome, AcceptedExploitIsMissedAndRejectedHonestIsAFalseAlarm) {
  auto accepted_verdict = Verdict::with_all_stages_pending();
  accepted_verdict.outcome = Outcome::accepted;
  const auto accepted = to_json(accepted_verdict);
  EXPECT_EQ(judge_corpus_entry(exploit("static", "x"), accepted).result, CorpusResult::missed);
  problem::CorpusEntry honest;
  honest.exploit_class = "honest";
  honest.expect_accepted = true;
  EXPECT_EQ(judge_corpus_entry(honest, accepted).result, CorpusResult::passed);
  EXPECT_EQ(judge_corpus_entry(honest, rejected_at(StageName::static_analysis, "x")).result,
            CorpusResult::false_alarm);
  EXPECT_TRUE(is_failure(CorpusResult::false_alarm));
  EXPECT_FALSE(is_failure(CorpusResult::skipped));
}

TEST(CorpusOutcome, ErrorsAndMalformedDocumentsAreErrorsNeverCatches) {
  auto failed = Verdict::with_all_stages_pending();
  failed.outcome = Outcome::error;
  failed.error = EvaluationError{"judge_lost", "the judge died"};
  const auto outcome = judge_corpus_entry(exploit("static", "x"), to_json(failed));
  EXPECT_EQ(outcome.result, CorpusResult::error);
  EXPECT_NE(outcome.detail.find("judge_lost"), std::string::npos);
  EXPECT_EQ(judge_corpus_entry(exploit("static", "x"), nlohmann::json("garbage")).result,
            CorpusResult::error);
  // rejected, but no stage says where: an exploit that is not shown caught is missed
  EXPECT_EQ(judge_corpus_entry(exploit("static", "x"), nlohmann::json{{"outcome", "rejected"}}).result,
            CorpusResult::missed);
}

TEST(CorpusManifest, LoadsEntriesAndNamesTheBadField) {
  const fs::path root = fs::temp_directory_path() / "kforge-corpus-test";
  fs::create_directories(root / "corpus" / "honest");
  fs::create_directories(root / "problems" / "starter" / "p");
  std::ofstream(root / "problems" / "starter" / "p" / "problem.py") << "x = 1\n";
  std::ofstream(root / "corpus" / "honest" / "a.py") << "x = 1\n";
  std::ofstream(root / "corpus" / "manifest.json")
      << R"([{"candidate": "honest/a.py", "problem": "starter/p", "class": "honest", "expect": "accepted"}])";
  const auto manifest = problem::load_corpus_manifest(root / "corpus", root / "problems");
  ASSERT_EQ(manifest.entries.size(), 1U);
  EXPECT_TRUE(manifest.entries[0].expect_accepted);
  EXPECT_EQ(manifest.entries[0].profile, "strict");

  std::ofstream(root / "corpus" / "manifest.json")
      << R"([{"candidate": "honest/a.py", "problem": "starter/p", "class": "x", "expect": "rejected"}])";
  try {
    problem::load_corpus_manifest(root / "corpus", root / "problems");
    FAIL() << "a rejected entry without expect_stage must not load";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("expect_stage"), std::string::npos);
  }
  std::ofstream(root / "corpus" / "manifest.json") << "not json";
  EXPECT_THROW(problem::load_corpus_manifest(root / "corpus", root / "problems"), std::runtime_error);
  fs::remove_all(root);
}

}  // namespace
}  // namespace kforge::verify
