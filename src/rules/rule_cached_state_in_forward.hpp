#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// State kept across forward calls (self attributes, module-level objects, global/nonlocal
// rebinding, module-level container mutation, functools caches) on the path from ModelNew.forward,
// __init__ excluded: cached outputs or work make the timing measure nothing.
class CachedStateInForwardRule final : public Rule {
 public:
  static constexpr std::string_view kId = "cached-state-in-forward";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
