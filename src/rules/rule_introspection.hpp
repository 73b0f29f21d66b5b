#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// Introspection of the running interpreter: inspect, gc, sys._getframe/settrace/setprofile,
// traceback stack walking, frame and code attributes, globals() and writes through locals().
class IntrospectionRule final : public Rule {
 public:
  static constexpr std::string_view kId = "introspection";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
