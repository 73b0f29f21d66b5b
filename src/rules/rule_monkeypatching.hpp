#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// Assignment, augmented assignment, del, setattr/delattr whose target is an imported module or
// anything reached through one (torch, time, triton...), a class not defined in the module, or a
// builtin through `builtins`; also unittest.mock. The candidate's own classes and instances are fine.
class MonkeypatchingRule final : public Rule {
 public:
  static constexpr std::string_view kId = "monkeypatching";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
