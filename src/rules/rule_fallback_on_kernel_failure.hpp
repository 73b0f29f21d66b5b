#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// A try statement on the path from ModelNew.forward whose body launches a Triton kernel (directly
// or through a function it calls) with an except handler that does not re-raise: a failing kernel
// would silently fall back to other code. contextlib.suppress around a launch counts too.
class FallbackOnKernelFailureRule final : public Rule {
 public:
  static constexpr std::string_view kId = "fallback-on-kernel-failure";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
