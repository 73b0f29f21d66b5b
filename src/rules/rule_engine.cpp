#include "rules/rule_engine.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "rules/rule_kernel_launched.hpp"

namespace kforge::rules {

RuleEngine RuleEngine::with_default_rules() {
  RuleEngine engine;
  engine.add_rule(std::make_unique<KernelLaunchedRule>());
  return engine;
}

void RuleEngine::add_rule(std::unique_ptr<Rule> rule) {
  if (rule) {
    rules_.push_back(std::move(rule));
  }
}

std::vector<Finding> RuleEngine::run(const AnalysisContext& context) const {
  std::vector<Finding> findings;
  for (const auto& rule : rules_) {
    try {
      rule->check(context, findings);
    } catch (const std::exception& error) {
      findings.push_back({std::string(rule->id()),
                          Severity::warn,
                          "rule failed with an internal error and was skipped: " + std::string(error.what()),
                          {1, 1}});
    }
  }
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return a.location < b.location || (a.location == b.location && a.rule_id < b.rule_id);
  });
  return findings;
}

}  // namespace kforge::rules
