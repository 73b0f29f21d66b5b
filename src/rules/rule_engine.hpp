#pragma once

#include <memory>
#include <vector>

#include "rules/analysis_context.hpp"
#include "rules/finding.hpp"
#include "rules/rule.hpp"

namespace kforge::rules {

// Owns a set of rules and runs them all over one candidate.
class RuleEngine {
 public:
  // An engine with every rule of kforge registered.
  static RuleEngine with_default_rules();

  void add_rule(std::unique_ptr<Rule> rule);
  const std::vector<std::unique_ptr<Rule>>& rules() const { return rules_; }

  // Findings of all rules, sorted by location, then rule id. A rule that throws does not stop
  // the others: its failure becomes a warn finding under its id.
  std::vector<Finding> run(const AnalysisContext& context) const;

 private:
  std::vector<std::unique_ptr<Rule>> rules_;
};

}  // namespace kforge::rules
