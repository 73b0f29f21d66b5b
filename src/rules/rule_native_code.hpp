#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// Native code and other compilers or kernel libraries: ctypes, cffi, cpp_extension, jiterator,
// cupy, numba, pycuda, cuda-python, tvm, jax, tensorflow, torch.compile/_dynamo/_inductor/jit,
// torch._C, torch.library op definitions, triton.tools, prebuilt kernel libraries and kforge itself.
class NativeCodeRule final : public Rule {
 public:
  static constexpr std::string_view kId = "native-code";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
