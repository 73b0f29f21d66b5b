#include "reward/verdict_facts.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace kforge::reward {
namespace {

// Rejections in the honesty stages that are plain failures, not cheating: no kernel written, a module
// too complex to analyse, a crash or compile error during a runtime probe.
constexpr std::array<std::string_view, 5> kPlainFailures = {
    "triton-kernel-launched", "static-analysis-failed", "forward-error", "compile-error", "worker-error"};

const nlohmann::json* find_stage(const nlohmann::json& verdict, std::string_view name) {
  const auto stages = verdict.find("stages");
  if (stages == verdict.end() || !stages->is_array()) {
    return nullptr;
  }
  for (const auto& stage : *stages) {
    if (stage.is_object() && stage.value("name", "") == name) {
      return &stage;
    }
  }
  return nullptr;
}

bool stage_passed(const nlohmann::json* stage) {
  return stage != nullptr && stage->value("status", "") == "passed";
}

std::optional<double> number_at(const nlohmann::json* object, const char* key) {
  if (object == nullptr || !object->is_object()) {
    return std::nullopt;
  }
  const auto found = object->find(key);
  if (found == object->end() || !found->is_number()) {
    return std::nullopt;
  }
  return found->get<double>();
}

const nlohmann::json* details_of(const nlohmann::json* stage) {
  if (stage == nullptr) {
    return nullptr;
  }
  const auto details = stage->find("details");
  return details != stage->end() && details->is_object() ? &*details : nullptr;
}

bool launches_a_kernel(const nlohmann::json* static_stage) {
  const auto* details = details_of(static_stage);
  if (details == nullptr) {
    return false;
  }
  const auto launched = details->find("launched_kernels");
  return launched != details->end() && launched->is_array() && !launched->empty();
}

void collect_cheating(const nlohmann::json* stage, std::vector<std::string>& out) {
  if (stage == nullptr || stage->value("status", "") != "failed") {
    return;
  }
  const auto findings = stage->find("findings");
  if (findings == stage->end() || !findings->is_array()) {
    return;
  }
  const std::string name = stage->value("name", "");
  for (const auto& finding : *findings) {
    if (!finding.is_object() || finding.value("severity", "") != "reject") {
      continue;
    }
    const std::string rule = finding.value("rule", "");
    if (is_cheating_finding(name, rule) && std::find(out.begin(), out.end(), rule) == out.end()) {
      out.push_back(rule);
    }
  }
}

}  // namespace

bool is_cheating_finding(const std::string& stage, const std::string& rule) {
  if (stage != "static" && stage != "runtime" && stage != "performance") {
    return false;  // extract, compile and correctness failures are the candidate being wrong
  }
  return std::find(kPlainFailures.begin(), kPlainFailures.end(), rule) == kPlainFailures.end();
}

VerdictFacts read_verdict_facts(const nlohmann::json& verdict) {
  VerdictFacts facts;
  if (!verdict.is_object()) {
    return facts;
  }
  const std::string outcome = verdict.value("outcome", "error");
  facts.evaluated = outcome == "accepted" || outcome == "rejected";
  if (!facts.evaluated) {
    return facts;
  }
  facts.accepted = outcome == "accepted";
  const auto* static_stage = find_stage(verdict, "static");
  const auto* runtime = find_stage(verdict, "runtime");
  facts.code_found = stage_passed(find_stage(verdict, "extract"));
  facts.static_passed = stage_passed(static_stage);
  facts.triton_kernel = launches_a_kernel(static_stage);
  facts.compiled = stage_passed(find_stage(verdict, "compile"));
  facts.correct = stage_passed(find_stage(verdict, "correctness"));
  facts.runtime_passed = stage_passed(runtime);
  if (facts.accepted) {
    facts.speedup = number_at(&verdict, "speedup");
  }
  facts.time_coverage = number_at(details_of(runtime), "time_coverage");
  for (const char* name : {"static", "runtime", "performance"}) {
    collect_cheating(find_stage(verdict, name), facts.cheating);
  }
  return facts;
}

}  // namespace kforge::reward
