#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// Dispatch interception: TorchDispatchMode/TorchFunctionMode and the machinery around them
// (mode stacks, _disable_current_modes, dispatch-key guards, the profiler switches, __torch_dispatch__
// subclasses), under any module path that re-exports them (torch.autograd.graph,
// torch.utils.checkpoint, torch.utils.flop_counter, torch._subclasses.fake_tensor, torch.utils._device,
// torch._library...) and in strings read as names. A candidate's mode runs its code inside every
// tensor operation, kforge's own included, and popping kforge's recorder hides its ATen work.
class DispatchInterceptionRule final : public Rule {
 public:
  static constexpr std::string_view kId = "dispatch-interception";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
