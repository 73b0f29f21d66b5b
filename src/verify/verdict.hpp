#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "rules/finding.hpp"

namespace kforge::verify {

inline constexpr const char* kVerdictSchema = "kforge.verdict/2";

// The pipeline's stages, in the order they run.
enum class StageName { extract, static_analysis, compile, correctness, runtime, performance };
enum class StageStatus { passed, failed, skipped, not_run };
enum class Outcome { accepted, rejected, error };

struct StageResult {
  StageName name = StageName::extract;
  StageStatus status = StageStatus::not_run;
  std::string summary;  // one line a person reads
  double duration_s = 0.0;
  std::vector<rules::Finding> findings;
  nlohmann::json details = nlohmann::json::object();  // stage-specific measurements
};

// Why no verdict on the candidate could be given: bad usage, a broken problem, a missing interpreter.
struct EvaluationError {
  std::string kind;     // usage | problem | environment | internal
  std::string message;  // what was expected, what was found, what to do
};

struct Verdict {
  Outcome outcome = Outcome::error;
  std::vector<StageResult> stages;  // always all six, in order
  std::optional<EvaluationError> error;
  nlohmann::json problem = nlohmann::json::object();
  nlohmann::json candidate = nlohmann::json::object();
  nlohmann::json device = nlohmann::json::object();
  nlohmann::json settings = nlohmann::json::object();
  std::optional<double> speedup;
  double duration_s = 0.0;

  static Verdict with_all_stages_pending();
  StageResult& stage(StageName name);
  const StageResult& stage(StageName name) const;
  std::optional<StageName> failed_stage() const;
  std::string summary() const;  // one line: the outcome and the reason
};

std::string to_string(StageName name);
std::string to_string(StageStatus status);
std::string to_string(Outcome outcome);

nlohmann::json to_json(const Verdict& verdict);
nlohmann::json to_json(const StageResult& stage);  // one entry of the verdict's "stages"
nlohmann::json to_json(const rules::Finding& finding);

// The verdict document of an evaluation that never ran its stages (a sample naming no usable
// problem, a failure inside kforge): outcome error, no stages, the error's kind and message.
nlohmann::json error_verdict_json(const EvaluationError& error);

// Exit code of `kforge eval`: 0 accepted, 1 rejected, 2 usage or environment error.
int exit_code(const Verdict& verdict);

}  // namespace kforge::verify
