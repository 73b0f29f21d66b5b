#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_kernel_launched.hpp"
#include "source/module_index.hpp"
#include "source/python_parser.hpp"

namespace kforge::rules {
namespace {

std::vector<Finding> check_source(std::string_view source, Profile profile = Profile::strict) {
  const source::ParseResult parsed = source::parse_module(source);
  EXPECT_TRUE(parsed.ok()) << parsed.error->message;
  if (!parsed.ok()) {
    return {};
  }
  const source::ModuleIndex index = source::build_module_index(*parsed.module);
  std::vector<Finding> findings;
  KernelLaunchedRule().check(AnalysisContext{*parsed.module, index, source, profile}, findings);
  return findings;
}

constexpr std::string_view kKernels = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass

@triton.jit
def shift_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass
)PY";

std::string with_kernels(std::string_view body) { return std::string(kKernels) + std::string(body); }

TEST(KernelLaunchedRule, Metadata) {
  const KernelLaunchedRule rule;
  EXPECT_EQ(rule.id(), "triton-kernel-launched");
  EXPECT_EQ(rule.severity(), Severity::reject);
  EXPECT_EQ(rule.summary(),
            "a @triton.jit kernel must be defined and launched from ModelNew.forward or a function it calls");
}

TEST(KernelLaunchedRule, PassesWhenAKernelIsLaunchedFromForward) {
  EXPECT_TRUE(check_source(with_kernels(R"PY(
class ModelNew(nn.Module):
    def forward(self, x):
        scale_kernel[(1,)](x, x.numel(), BLOCK=256)
        return x
)PY"))
                  .empty());
}

TEST(KernelLaunchedRule, NoKernelDefined) {
  const std::vector<Finding> findings = check_source(R"PY(import torch
class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
)PY");
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].rule_id, "triton-kernel-launched");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].message,
            "no Triton kernel is defined: expected a function decorated with @triton.jit");
  EXPECT_EQ(findings[0].location, (source::SourceLocation{1, 1}));
}

TEST(KernelLaunchedRule, NoModelNew) {
  const std::vector<Finding> findings = check_source(with_kernels("\nclass Model(nn.Module):\n    pass\n"));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].message, "no class named ModelNew is defined");
}

TEST(KernelLaunchedRule, NeitherKernelNorModelNew) {
  const std::vector<Finding> findings = check_source("x = 1\n");
  ASSERT_EQ(findings.size(), 2U);
  EXPECT_EQ(findings[0].message,
            "no Triton kernel is defined: expected a function decorated with @triton.jit");
  EXPECT_EQ(findings[1].message, "no class named ModelNew is defined");
}

TEST(KernelLaunchedRule, ModelNewWithoutForward) {
  const std::vector<Finding> findings =
      check_source(with_kernels("\nclass ModelNew(nn.Module):\n    def run(self, x):\n        return x\n"));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].message, "class ModelNew does not define a forward() method");
  EXPECT_EQ(findings[0].location, (source::SourceLocation{14, 1}));
}

TEST(KernelLaunchedRule, AliasedModelWithoutForward) {
  const std::vector<Finding> findings =
      check_source(with_kernels("\nclass Impl:\n    pass\n\nModelNew = Impl\n"));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].message, "class Impl (bound to ModelNew) does not define a forward() method");
}

TEST(KernelLaunchedRule, KernelsDefinedButNoneLaunched) {
  const std::vector<Finding> findings = check_source(with_kernels(R"PY(
class ModelNew(nn.Module):
    def forward(self, x):
        return x * 2
)PY"));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(
      findings[0].message,
      "Triton kernels `scale_kernel` and `shift_kernel` are defined but none is launched from "
      "ModelNew.forward: expected a launch such as `kernel[grid](...)` in forward or in a function it calls");
  EXPECT_EQ(findings[0].location, (source::SourceLocation{7, 1}));
}

TEST(KernelLaunchedRule, SingleKernelLaunchedOnlyFromAnUnreachableHelper) {
  const std::vector<Finding> findings = check_source(R"PY(import triton

@triton.jit
def k(x):
    pass

def launch(x):
    k[(1,)](x)

class ModelNew:
    def forward(self, x):
        return x
)PY");
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].message,
            "Triton kernel `k` is defined but not launched from ModelNew.forward: expected a launch such as "
            "`kernel[grid](...)` in forward or in a function it calls; `k` is launched only from `launch` "
            "(line 8), "
            "which ModelNew.forward never calls");
}

TEST(KernelLaunchedRule, SameVerdictUnderLenientProfile) {
  const std::vector<Finding> findings = check_source("x = 1\n", Profile::lenient);
  ASSERT_EQ(findings.size(), 2U);
  EXPECT_EQ(findings[0].severity, Severity::reject);
}

}  // namespace
}  // namespace kforge::rules
