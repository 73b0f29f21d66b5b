#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "problem/corpus_manifest.hpp"
#include "verify/corpus_outcome.hpp"

namespace kforge::report {

struct CorpusRow {
  problem::CorpusEntry entry;
  verify::CorpusOutcome outcome;
  double duration_s = 0.0;
};

// Per class: how many exploits were caught on their documented path (detection rate), and for the
// honest class how many were rejected (false-positive rate); then every failure with its reason.
std::string render_corpus_report(const std::vector<CorpusRow>& rows, const std::string& device);

// The same as a JSON document (schema "kforge.corpus-report/1").
nlohmann::json corpus_report_json(const std::vector<CorpusRow>& rows, const std::string& device);

}  // namespace kforge::report
