#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_python_in_kernel.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(PythonInKernelRule(), source, profile);
}

// A module with one extra kernel whose body ends with `line`, and a ModelNew that launches it.
std::string kernel_with(std::string_view line, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\n@triton.jit\ndef body_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                      "    offs = tl.arange(0, BLOCK)\n    v = tl.load(x_ptr + offs)\n    " +
                      std::string(line) +
                      "\n    tl.store(out_ptr + offs, v)\n\n\nclass ModelNew(nn.Module):\n"
                      "    def forward(self, x):\n        out = torch.empty_like(x)\n"
                      "        body_kernel[(1,)](x, out, x.numel(), BLOCK=16)\n        return out\n");
}

void expect_one_at(const std::string& source, std::string_view needle) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "python-in-kernel");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle)) << findings[0].message;
}

TEST(PythonInKernelRule, Metadata) {
  const PythonInKernelRule rule;
  EXPECT_EQ(rule.id(), "python-in-kernel");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(PythonInKernelRule, HonestKernelBodiesPass) {
  EXPECT_TRUE(check(kernel_with("v = tl.exp(v) * 2.0 + tl.sum(v, axis=0)")).empty());
  EXPECT_TRUE(
      check(kernel_with("v = libdevice.tanh(v)", "from triton.language.extra import libdevice")).empty());
  EXPECT_TRUE(check(kernel_with("v = helper(v)", "@triton.jit\ndef helper(v):\n    return v * 2")).empty());
  EXPECT_TRUE(
      check(kernel_with("for i in range(4):\n        v += tl.full((BLOCK,), i, tl.float32)")).empty());
  EXPECT_TRUE(
      check(kernel_with("v = v.to(tl.float32) + min(BLOCK, 8) + math.log2(BLOCK)", "import math")).empty());
  EXPECT_TRUE(
      check(kernel_with("v = tl.where(offs < n, v, 0.0)\n    v = [v * 2 for _ in range(1)][0]")).empty());
  // Inductor-generated kernels call its @triton.jit helper library.
  EXPECT_TRUE(check(kernel_with("m, s, w = triton_helpers.welford_reduce(v, v, v, v, True)",
                                "from torch._inductor.runtime import triton_helpers"))
                  .empty());
}

TEST(PythonInKernelRule, PlainPythonHelpersAndLambdas) {
  expect_one_at(kernel_with("v = on_host(v)", "def on_host(v):\n    return v"), "on_host(v)\n");
  expect_one_at(kernel_with("v = twice(v)", "twice = lambda v: v + v"), "twice(v)\n");
}

TEST(PythonInKernelRule, NumpyTorchAndHostData) {
  expect_one_at(kernel_with("v = np.cumsum(v)", "import numpy as np"), "np.cumsum(v)");
  expect_one_at(kernel_with("v = torch.exp(v)"), "torch.exp(v)");
  const std::string source = kernel_with("arr = v.handle.data");
  const auto findings = check(source);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].location, location_of(source, "v.handle"));
  expect_one_at(kernel_with("s = sorted(v)"), "sorted(v)");
}

TEST(PythonInKernelRule, SyntaxTritonDoesNotCompile) {
  expect_one_at(kernel_with("f = lambda a: a"), "lambda a");
  expect_one_at(kernel_with("import numpy"), "import numpy");
  expect_one_at(kernel_with("d = {0: v}"), "{0: v}");
  expect_one_at(kernel_with("try:\n        pass\n    except Exception:\n        pass"), "try:");
}

TEST(PythonInKernelRule, CodeOutsideKernelsIsNotChecked) {
  EXPECT_TRUE(check(with_prelude("import numpy as np\n\nclass ModelNew(nn.Module):\n"
                                 "    def forward(self, x):\n        n = int(np.prod(x.shape))\n"
                                 "        return launch_copy(x)\n"))
                  .empty());
}

TEST(PythonInKernelRule, LenientWarns) {
  const auto findings = check(kernel_with("v = torch.exp(v)"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

}  // namespace
}  // namespace kforge::rules
