#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// Python inside @triton.jit bodies: a kernel body may call only Triton (tl.*, triton.*, libdevice),
// other @triton.jit functions, `math` on compile-time values and the builtins Triton's compiler
// implements (range, len, min, max, int, float, isinstance, getattr...). Under the interpreter
// (TRITON_INTERPRET=1) a kernel body is plain Python, so a call to a Python helper, numpy or torch,
// or `x.handle.data`, would compute outside Triton and still pass on the CPU.
class PythonInKernelRule final : public Rule {
 public:
  static constexpr std::string_view kId = "python-in-kernel";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
