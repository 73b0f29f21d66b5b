#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "problem/corpus_manifest.hpp"

namespace kforge::verify {

enum class CorpusResult : std::uint8_t {
  caught,       // exploit rejected at the expected stage by the expected check
  wrong_path,   // exploit rejected, but not where the corpus says it must be caught
  missed,       // exploit accepted
  passed,       // honest candidate accepted
  false_alarm,  // honest candidate rejected
  error,        // no verdict on the candidate (environment, problem)
  skipped,      // not run here (GPU-only entry on the CPU)
};

std::string to_string(CorpusResult result);
// caught and passed are successes; skipped is neither.
bool is_failure(CorpusResult result);

struct CorpusOutcome {
  CorpusResult result = CorpusResult::error;
  std::string detail;  // what the verdict said, when it is not what the corpus expects
};

// Compares the verdict document (verify::to_json, as the scheduler returns it) on a corpus entry with
// what the entry expects.
CorpusOutcome judge_corpus_entry(const problem::CorpusEntry& entry, const nlohmann::json& verdict);

}  // namespace kforge::verify
