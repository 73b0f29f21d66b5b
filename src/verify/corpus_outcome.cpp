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

namespace {

// The first failed stage of a verdict document, or null when none failed.
const nlohmann::json* failed_stage(const nlohmann::json& verdict) {
  const auto stages = verdict.find("stages");
  if (stages == verdict.end() || !stages->is_array()) {
    return nullptr;
  }
  for (const auto& stage : *stages) {
    if (stage.is_object() && stage.value("status", "") == "failed") {
      return &stage;
    }
  }
  return nullptr;
}

bool has_rejecting_finding(const nlohmann::json& stage, const std::string& rule) {
  const auto findings = stage.find("findings");
  if (findings == stage.end() || !findings->is_array()) {
    return false;
  }
  return std::any_of(findings->begin(), findings->end(), [&](const nlohmann::json& finding) {
    return finding.is_object() && finding.value("rule", "") == rule &&
           finding.value("severity", "") == "reject";
  });
}

std::string error_text(const nlohmann::json& verdict) {
  const auto error = verdict.find("error");
  if (error == verdict.end() || !error->is_object()) {
    return "error";
  }
  return error->value("kind", "error") + ": " + error->value("message", "");
}

}  // namespace

CorpusOutcome judge_corpus_entry(const problem::CorpusEntry& entry, const nlohmann::json& verdict) {
  const std::string outcome = verdict.is_object() ? verdict.value("outcome", "error") : "error";
  if (outcome == "error") {
    return {CorpusResult::error, verdict.is_object() ? error_text(verdict) : "no verdict document"};
  }
  const std::string summary = verdict.value("summary", "");
  const auto* failed = failed_stage(verdict);
  if (entry.expect_accepted) {
    return outcome == "accepted" ? CorpusOutcome{CorpusResult::passed, ""}
                                 : CorpusOutcome{CorpusResult::false_alarm, summary};
  }
  if (outcome == "accepted" || failed == nullptr) {
    return {CorpusResult::missed, summary};
  }
  if (failed->value("name", "") == entry.expect_stage && has_rejecting_finding(*failed, entry.expect_check)) {
    return {CorpusResult::caught, ""};
  }
  return {CorpusResult::wrong_path, summary};
}

}  // namespace kforge::verify
