#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// PyTorch compute (torch.*, torch.nn.functional.*, torch.ops.*, nn modules, tensor compute methods,
// the @ operator) on the path from ModelNew.forward: the speedup must come from Triton kernels.
// Allocation, views, layout, dtype/device moves and shape arithmetic are allowed; torch.cat/stack
// are data movement and only warn.
class TorchComputeInForwardRule final : public Rule {
 public:
  static constexpr std::string_view kId = "torch-compute-in-forward";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
