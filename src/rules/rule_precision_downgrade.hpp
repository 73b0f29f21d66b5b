#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// Casts to float16/bfloat16/float8 (host code on the path from forward and Triton kernels) and
// explicit TF32 in tl.dot, when the problem computes in float32. Severity depends on the problem:
// float32 -> reject (strict) / warn (lenient); unknown problem -> warn; half-precision problem -> nothing.
class PrecisionDowngradeRule final : public Rule {
 public:
  static constexpr std::string_view kId = "precision-downgrade";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
