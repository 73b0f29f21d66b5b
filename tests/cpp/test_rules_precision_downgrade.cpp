#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_precision_downgrade.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_precision_downgrade_test {

using testing::location_of;
using testing::with_prelude;

constexpr std::string_view kFloat32Problem =
    R"PY("""Softmax over the last dimension. Float32; half the rows are negative."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(64, 128)]
)PY";

constexpr std::string_view kHalfProblem = R"PY(import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 128, dtype=torch.float16)]
)PY";

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict,
                           std::string_view problem = kFloat32Problem) {
  return testing::run_rule(PrecisionDowngradeRule(), source, profile, problem);
}

std::string model_with(std::string_view forward_line, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_line) + "\n        return launch_copy(x)\n");
}

// A second kernel whose body holds `line` (indented by 4), launched from forward.
std::string kernel_with(std::string_view line) {
  return with_prelude(R"PY(

@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    )PY" + std::string(line) +
                      R"PY(
    tl.store(out_ptr + offs, x, mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        scale_kernel[(1,)](x, out, x.numel(), BLOCK=1024)
        return out
)PY");
}

void expect_one_at(const std::string& source, std::string_view needle, int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "precision-downgrade");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(PrecisionDowngradeRule, Metadata) {
  const PrecisionDowngradeRule rule;
  EXPECT_EQ(rule.id(), "precision-downgrade");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(PrecisionDowngradeRule, HalfAndBfloat16Methods) {
  const std::string source = model_with("x = x.half()");
  expect_one_at(source, "x.half");
  EXPECT_TRUE(testing::mentions(check(source)[0], "computes in float32"));
  expect_one_at(model_with("x = x.bfloat16()"), "x.bfloat16");
}

TEST(PrecisionDowngradeRule, CastsAndAllocationsWithLowPrecisionDtypes) {
  expect_one_at(model_with("x = x.to(torch.float16)"), "torch.float16");
  expect_one_at(model_with("x = x.to(dtype=torch.bfloat16)"), "torch.bfloat16");
  expect_one_at(model_with("x = x.to(torch.float8_e4m3fn)"), "torch.float8_e4m3fn");
  expect_one_at(model_with("out = torch.empty(x.shape, dtype=torch.half, device=x.device)"), "torch.half");
  expect_one_at(model_with("x = x.type(torch.HalfTensor)"), "torch.HalfTensor");
  expect_one_at(model_with("x = x.type(\"torch.cuda.HalfTensor\")"), "\"torch.cuda.HalfTensor\"");
}

TEST(PrecisionDowngradeRule, DtypesThroughAliases) {
  expect_one_at("from torch import float16 as f16\n" + model_with("x = x.to(f16)"), "f16)");
  expect_one_at(model_with("x = x.to(LOW)", "\nLOW = torch.bfloat16\n"), "LOW)");
  expect_one_at(
      model_with("out = torch.empty(4, dtype=NARROW)",
                 "\nimport numpy as np\nNARROW = torch.from_numpy(np.empty(0, dtype=\"e\")).dtype\n"),
      "NARROW)");
}

TEST(PrecisionDowngradeRule, DispatchThatNarrowsFloat32InputsIsStillADowngrade) {
  // Only the branch taken when the input is already half precision is exempt.
  expect_one_at(model_with("x = x.to(torch.float16 if x.dtype == torch.float32 else x.dtype)"),
                "torch.float16");
  expect_one_at(
      model_with("dt = torch.bfloat16 if x.dtype != torch.bfloat16 else torch.float32\n        x = x.to(dt)"),
      "dt)");
}

TEST(PrecisionDowngradeRule, AutocastWithoutDtype) {
  expect_one_at(model_with("with torch.autocast(\"cuda\"):\n            x = launch_copy(x)"),
                "torch.autocast");
}

TEST(PrecisionDowngradeRule, InsideKernels) {
  expect_one_at(kernel_with("x = x.to(tl.float16)"), "tl.float16");
  expect_one_at(kernel_with("x = tl.cast(x, tl.bfloat16)"), "tl.bfloat16");
  expect_one_at(kernel_with("acc = tl.zeros([BLOCK], dtype=tl.float8e4nv)"), "tl.float8e4nv");
}

TEST(PrecisionDowngradeRule, ExplicitTf32InDot) {
  expect_one_at(kernel_with("y = tl.dot(x, x, allow_tf32=True)"), "allow_tf32");
  expect_one_at(kernel_with("y = tl.dot(x, x, input_precision=\"tf32x3\")"), "input_precision");
}

TEST(PrecisionDowngradeRule, ReachedThroughAHelper) {
  const std::string source = with_prelude(R"PY(

def narrow(x):
    return x.half()


class ModelNew(nn.Module):
    def forward(self, x):
        return launch_copy(narrow(x))
)PY");
  expect_one_at(source, "x.half");
  EXPECT_TRUE(testing::mentions(check(source)[0], "in `narrow`"));
}

TEST(PrecisionDowngradeRule, LenientProfileWarnsForAFloat32Problem) {
  const std::vector<Finding> findings = check(model_with("x = x.half()"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(PrecisionDowngradeRule, UnknownProblemWarnsUnderBothProfiles) {
  for (const Profile profile : {Profile::strict, Profile::lenient}) {
    const std::vector<Finding> findings = check(model_with("x = x.half()"), profile, "");
    ASSERT_EQ(findings.size(), 1U);
    EXPECT_EQ(findings[0].severity, Severity::warn);
    EXPECT_TRUE(testing::mentions(findings[0], "precision is unknown"));
  }
}

TEST(PrecisionDowngradeRule, HalfPrecisionProblemsMayCast) {
  EXPECT_TRUE(check(model_with("x = x.half()"), Profile::strict, kHalfProblem).empty());
  EXPECT_TRUE(check(kernel_with("x = x.to(tl.float16)"), Profile::strict, kHalfProblem).empty());
  EXPECT_TRUE(
      check(model_with("x = x.half()"), Profile::strict, "import torch\nX = torch.ones(2).bfloat16()\n")
          .empty());
}

TEST(PrecisionDowngradeRule, AProblemThatNeverSpellsAHalfDtypeIsFloat32) {
  // No half-precision marker anywhere in the text: decided without parsing the problem.
  const std::string problem = "import torch\n\ndef get_inputs():\n    return [torch.randn(8)]\n";
  EXPECT_EQ(check(model_with("x = x.half()"), Profile::strict, problem).size(), 1U);
}

TEST(PrecisionDowngradeRule, AHalfDtypeHiddenByAnEscapeStillMakesTheProblemHalf) {
  // "flo\x61t16" is "float16" once Python reads the literal: the text alone does not show it.
  const std::string problem =
      "import torch\n\ndef get_inputs():\n    return [torch.randn(8).to(\"flo\\x61t16\")]\n";
  ASSERT_EQ(problem.find("float16"), std::string::npos);
  EXPECT_TRUE(check(model_with("x = x.half()"), Profile::strict, problem).empty());
}

TEST(PrecisionDowngradeRule, DocstringsOfTheProblemDoNotMakeItHalf) {
  // kFloat32Problem says "half the rows" in its docstring: still a float32 problem.
  EXPECT_EQ(check(model_with("x = x.half()")).size(), 1U);
}

TEST(PrecisionDowngradeRule, Float32CodeIsClean) {
  const std::string source = with_prelude(R"PY(


@triton.jit
def acc_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Accumulates in float32; never calls .to(tl.float16)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    y = tl.dot(x, x)
    tl.store(out_ptr + offs, (acc + x).to(out_ptr.dtype.element_ty), mask=offs < n)


class ModelNew(nn.Module):
    """x.half() would be a downgrade; this docstring only names it."""

    def forward(self, x):
        # x.to(torch.float16) in a comment is not code
        block = 64 if x.dtype == torch.float16 else 128
        out_dtype = torch.float16 if x.dtype == torch.float16 else torch.float32
        out = torch.empty(x.shape, dtype=out_dtype, device=x.device)
        x = x.to(torch.float32).float().to(x.dtype)
        acc_kernel[(1,)](x, out, x.numel(), BLOCK=block)
        return out
)PY");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
}

}  // namespace rules_precision_downgrade_test
}  // namespace kforge::rules
