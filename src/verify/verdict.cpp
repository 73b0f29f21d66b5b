#include "verify/verdict.hpp"

#include <array>
#include <stdexcept>

namespace kforge::verify {
namespace {

constexpr std::array kStageOrder{StageName::extract,     StageName::static_analysis, StageName::compile,
                                 StageName::correctness, StageName::runtime,         StageName::performance};

std::string severity_name(rules::Severity severity) {
  return severity == rules::Severity::reject ? "reject" : "warn";
}

}  // namespace

nlohmann::json to_json(const StageResult& stage) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& finding : stage.findings) {
    findings.push_back(to_json(finding));
  }
  return {{"name", to_string(stage.name)},  {"status", to_string(stage.status)}, {"summary", stage.summary},
          {"duration_s", stage.duration_s}, {"findings", std::move(findings)},   {"details", stage.details}};
}

std::string to_string(StageName name) {
  switch (name) {
    case StageName::extract:
      return "extract";
    case StageName::static_analysis:
      return "static";
    case StageName::compile:
      return "compile";
    case StageName::correctness:
      return "correctness";
    case StageName::runtime:
      return "runtime";
    case StageName::performance:
      return "performance";
  }
  return "unknown";
}

std::string to_string(StageStatus status) {
  switch (status) {
    case StageStatus::passed:
      return "passed";
    case StageStatus::failed:
      return "failed";
    case StageStatus::skipped:
      return "skipped";
    case StageStatus::not_run:
      return "not_run";
  }
  return "unknown";
}

std::string to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::accepted:
      return "accepted";
    case Outcome::rejected:
      return "rejected";
    case Outcome::error:
      return "error";
  }
  return "unknown";
}

Verdict Verdict::with_all_stages_pending() {
  Verdict verdict;
  for (const StageName name : kStageOrder) {
    StageResult stage;
    stage.name = name;
    verdict.stages.push_back(std::move(stage));
  }
  return verdict;
}

StageResult& Verdict::stage(StageName name) {
  for (auto& stage : stages) {
    if (stage.name == name) {
      return stage;
    }
  }
  throw std::logic_error("verdict has no stage " + to_string(name));
}

const StageResult& Verdict::stage(StageName name) const {
  for (const auto& stage : stages) {
    if (stage.name == name) {
      return stage;
    }
  }
  throw std::logic_error("verdict has no stage " + to_string(name));
}

std::optional<StageName> Verdict::failed_stage() const {
  for (const auto& stage : stages) {
    if (stage.status == StageStatus::failed) {
      return stage.name;
    }
  }
  return std::nullopt;
}

std::string Verdict::summary() const {
  if (outcome == Outcome::error) {
    return error ? "error (" + error->kind + "): " + error->message : "error";
  }
  if (const auto failed = failed_stage()) {
    return "rejected at " + to_string(*failed) + ": " + stage(*failed).summary;
  }
  if (speedup) {
    return "accepted: correct, " + stage(StageName::performance).summary;
  }
  return "accepted: correct; " + stage(StageName::performance).summary;
}

nlohmann::json to_json(const rules::Finding& finding) {
  return {{"rule", finding.rule_id},
          {"severity", severity_name(finding.severity)},
          {"message", finding.message},
          {"line", finding.location.line},
          {"column", finding.location.column}};
}

nlohmann::json error_verdict_json(const EvaluationError& error) {
  return {{"schema", kVerdictSchema},
          {"outcome", "error"},
          {"accepted", false},
          {"failed_stage", nullptr},
          {"summary", "error (" + error.kind + "): " + error.message},
          {"speedup", nullptr},
          {"stages", nlohmann::json::array()},
          {"error", {{"kind", error.kind}, {"message", error.message}}}};
}

nlohmann::json to_json(const Verdict& verdict) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& stage : verdict.stages) {
    stages.push_back(to_json(stage));
  }
  const auto failed = verdict.failed_stage();
  nlohmann::json document = {
      {"schema", kVerdictSchema},
      {"outcome", to_string(verdict.outcome)},
      {"accepted", verdict.outcome == Outcome::accepted},
      {"failed_stage", failed ? nlohmann::json(to_string(*failed)) : nlohmann::json(nullptr)},
      {"summary", verdict.summary()},
      {"speedup", verdict.speedup ? nlohmann::json(*verdict.speedup) : nlohmann::json(nullptr)},
      {"problem", verdict.problem},
      {"candidate", verdict.candidate},
      {"device", verdict.device},
      {"settings", verdict.settings},
      {"stages", std::move(stages)},
      {"duration_s", verdict.duration_s},
      {"error", verdict.error
                    ? nlohmann::json{{"kind", verdict.error->kind}, {"message", verdict.error->message}}
                    : nlohmann::json(nullptr)},
  };
  return document;
}

int exit_code(const Verdict& verdict) {
  switch (verdict.outcome) {
    case Outcome::accepted:
      return 0;
    case Outcome::rejected:
      return 1;
    case Outcome::error:
      return 2;
  }
  return 2;
}

}  // namespace kforge::verify
