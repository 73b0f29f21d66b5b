#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// Access that hides what code runs from static analysis: getattr/hasattr with a computed name on
// an imported module or torch.Tensor, __dict__/__getattribute__/vars() on modules, importlib,
// __import__, eval/exec/compile, __builtins__/builtins, sys.modules and decoders of embedded payloads.
class ObfuscatedAccessRule final : public Rule {
 public:
  static constexpr std::string_view kId = "obfuscated-access";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
