#pragma once

#include <string_view>
#include <vector>

#include "rules/analysis_context.hpp"
#include "rules/finding.hpp"

namespace kforge::rules {

// One static check over a parsed candidate. Rules are stateless; each lives in its own
// rule_<name>.cpp and is registered in RuleEngine::with_default_rules().
class Rule {
 public:
  Rule() = default;
  virtual ~Rule() = default;

  // Stable kebab-case identifier, e.g. "triton-kernel-launched", used in findings and reports.
  virtual std::string_view id() const = 0;
  // Severity of this rule's findings under Profile::strict.
  virtual Severity severity() const = 0;
  // Severity of this rule's findings under `profile`: by default the strict severity under
  // strict and warn under lenient. A rule whose findings vary (e.g. reads vs writes) documents
  // its exceptions; this is the severity of its main finding.
  virtual Severity severity_for(Profile profile) const {
    return profile == Profile::strict ? severity() : Severity::warn;
  }
  // One sentence saying what the rule requires.
  virtual std::string_view summary() const = 0;
  // Appends a finding for each violation found in `context`.
  virtual void check(const AnalysisContext& context, std::vector<Finding>& findings) const = 0;

 protected:
  // Copying only through derived classes prevents slicing through a base reference.
  Rule(const Rule&) = default;
  Rule(Rule&&) = default;
  Rule& operator=(const Rule&) = default;
  Rule& operator=(Rule&&) = default;
};

}  // namespace kforge::rules
