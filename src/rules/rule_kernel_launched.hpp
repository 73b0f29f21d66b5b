#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// A candidate must define at least one @triton.jit kernel and launch one from the call graph of
// ModelNew.forward; otherwise the speedup would not come from Triton. Separate findings say
// which part is missing: the kernel, the ModelNew class, its forward(), or the launch.
class KernelLaunchedRule final : public Rule {
 public:
  static constexpr std::string_view kId = "triton-kernel-launched";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  // A candidate without a launched kernel is never worth running, whatever the profile.
  Severity severity_for(Profile /*profile*/) const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
