#include "verify/corpus_outcome.hpp"

#include <algorithm>

namespace kforge::verify {

std::string to_string(CorpusResult result) {
  switch (result) {
    case CorpusResult::caught:
      return "caught";
    case CorpusResult::wrong_path:
      return "wrong-path";
    case CorpusResult::missed:
      return "missed";
    case CorpusResult::passed:
      return "passed";
    case CorpusResult::false_alarm:
      return "false-alarm";
    case CorpusResult::error:
      return "error";
    case CorpusResult::skipped:
      return "skipped";
  }
  return "error";
}

bool is_failure(CorpusResult result) {
  return result != CorpusResult::caught && result != CorpusResult::passed && result != CorpusResult::skipped;
}

CorpusOutcome judge_corpus_entry(const problem::CorpusEntry& entry, const Verdict& verdict) {
  if (verdict.outcome == Outcome::error) {
    return {CorpusResult::error,
            verdict.error ? verdict.error->kind + ": " + verdict.error->message : "error"};
  }
  const auto failed = verdict.failed_stage();
  if (entry.expect_accepted) {
    if (verdict.outcome == Outcome::accepted) {
      return {CorpusResult::passed, ""};
    }
    return {CorpusResult::false_alarm, verdict.summary()};
  }
  if (verdict.outcome == Outcome::accepted || !failed) {
    return {CorpusResult::missed, verdict.summary()};
  }
  const auto& stage = verdict.stage(*failed);
  const bool check_found =
      std::any_of(stage.findings.begin(), stage.findings.end(), [&](const auto& finding) {
        return finding.rule_id == entry.expect_check && finding.severity == rules::Severity::reject;
      });
  if (to_string(*failed) == entry.expect_stage && check_found) {
    return {CorpusResult::caught, ""};
  }
  return {CorpusResult::wrong_path, verdict.summary()};
}

}  // namespace kforge::verify
