#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_torch_compute_in_forward.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_torch_compute_in_forward_test {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(TorchComputeInForwardRule(), source, profile);
}

// A ModelNew whose forward launches the kernel, then runs `line` (indented by 8).
std::string forward_with(std::string_view line, std::string_view init = "") {
  return with_prelude(
      "\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n" +
      std::string(init) + "\n    def forward(self, x, y):\n        out = launch_copy(x)\n        " +
      std::string(line) + "\n        return out\n");
}

void expect_one_at(const std::string& source, std::string_view needle, int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "torch-compute-in-forward");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(TorchComputeInForwardRule, Metadata) {
  const TorchComputeInForwardRule rule;
  EXPECT_EQ(rule.id(), "torch-compute-in-forward");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(TorchComputeInForwardRule, DirectTorchCall) {
  const std::string source = forward_with("out = torch.softmax(out, dim=-1)");
  expect_one_at(source, "torch.softmax");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(testing::mentions(findings[0], "`torch.softmax`"));
  EXPECT_TRUE(testing::mentions(findings[0], "ModelNew.forward"));
  EXPECT_TRUE(testing::mentions(findings[0], "@triton.jit kernel"));
}

TEST(TorchComputeInForwardRule, FunctionalThroughModuleAlias) {
  const std::string source =
      "import torch.nn.functional as F\n" + forward_with("out = F.softmax(out, dim=-1)");
  expect_one_at(source, "F.softmax");
  EXPECT_TRUE(testing::mentions(check(source)[0], "(torch.nn.functional.softmax)"));
}

TEST(TorchComputeInForwardRule, FromImportWithAlias) {
  expect_one_at("from torch import matmul as mm\n" + forward_with("out = mm(out, y)"), "mm(out");
}

TEST(TorchComputeInForwardRule, FromImportOfFunctional) {
  expect_one_at("from torch.nn.functional import gelu\n" + forward_with("out = gelu(out)"), "gelu(out");
}

TEST(TorchComputeInForwardRule, TorchImportedUnderAnotherName) {
  expect_one_at("import torch as T\n" + forward_with("out = T.sum(out)"), "T.sum");
}

TEST(TorchComputeInForwardRule, ModuleLevelAlias) {
  expect_one_at("import torch.nn.functional as F\nact = F.silu\n" + forward_with("out = act(out)"),
                "act(out)");
}

TEST(TorchComputeInForwardRule, ImportInsideForward) {
  const std::string source = forward_with("import torch.nn.functional as Fn; out = Fn.relu(out)");
  expect_one_at(source, "Fn.relu");
}

TEST(TorchComputeInForwardRule, GetattrWithLiteralOnTorch) {
  expect_one_at(forward_with("out = getattr(torch, \"exp\")(out)"), "getattr(torch");
}

TEST(TorchComputeInForwardRule, TorchOpsAten) {
  expect_one_at(forward_with("out = torch.ops.aten.softmax.default(out, -1, False)"), "torch.ops");
}

TEST(TorchComputeInForwardRule, ReachedThroughAHelperFunction) {
  const std::string source = with_prelude(R"PY(

def finish(t):
    return torch.exp(t)


class ModelNew(nn.Module):
    def forward(self, x):
        return finish(launch_copy(x))
)PY");
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].location, location_of(source, "torch.exp"));
  EXPECT_TRUE(testing::mentions(findings[0], "in `finish`"));
}

TEST(TorchComputeInForwardRule, MethodOfAHelperClass) {
  const std::string source = with_prelude(R"PY(

class Reducer:
    def reduce(self, t):
        return t.sum(dim=-1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.reducer = Reducer()

    def forward(self, x):
        return self.reducer.reduce(launch_copy(x))
)PY");
  expect_one_at(source, "t.sum");
}

TEST(TorchComputeInForwardRule, LambdaInsideForward) {
  expect_one_at(forward_with("out = (lambda t: torch.tanh(t))(out)"), "torch.tanh");
}

TEST(TorchComputeInForwardRule, ModuleHeldInSelfAttribute) {
  const std::string source =
      forward_with("out = self.linear(out)", "        self.linear = nn.Linear(4, 4)\n");
  expect_one_at(source, "self.linear(out)");
  EXPECT_TRUE(testing::mentions(check(source)[0], "torch.nn.Linear"));
}

TEST(TorchComputeInForwardRule, ModuleWhoseNameIsATensorMethod) {
  // `norm` is also a tensor method name; the module held in self.norm is what counts.
  expect_one_at(forward_with("out = self.norm(out)", "        self.norm = nn.LayerNorm(4)\n"),
                "self.norm(out)");
}

TEST(TorchComputeInForwardRule, ModuleCalledThroughForward) {
  expect_one_at(forward_with("out = self.conv.forward(out)", "        self.conv = nn.Conv2d(3, 3, 1)\n"),
                "self.conv.forward");
}

TEST(TorchComputeInForwardRule, ModulesInAModuleList) {
  const std::string source =
      forward_with("for layer in self.layers: out = layer(out)",
                   "        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])\n");
  expect_one_at(source, "layer(out)");
}

TEST(TorchComputeInForwardRule, ModuleBuiltAndCalledInPlace) {
  expect_one_at(forward_with("out = nn.ReLU()(out)"), "nn.ReLU()(out)");
}

TEST(TorchComputeInForwardRule, SuperForwardOfATorchModule) {
  const std::string source = with_prelude(R"PY(

class ModelNew(nn.Linear):
    def forward(self, x):
        launch_copy(x)
        return super().forward(x)
)PY");
  expect_one_at(source, "super().forward");
}

TEST(TorchComputeInForwardRule, FunctionAssignedToSelfInInit) {
  const std::string source = "import torch.nn.functional as F\n" +
                             forward_with("out = self.act(out)", "        self.act = F.gelu\n");
  expect_one_at(source, "self.act(out)");
  EXPECT_TRUE(testing::mentions(check(source)[0], "torch.nn.functional.gelu"));
}

TEST(TorchComputeInForwardRule, FunctionLookedUpInADispatchTable) {
  const std::string source = "import torch\nTABLE = {\"scan\": torch.cumsum, \"max\": torch.cummax}\n" +
                             forward_with("out = self.op(out, -1)", "        self.op = TABLE[\"scan\"]\n");
  expect_one_at(source, "self.op(out");
}

TEST(TorchComputeInForwardRule, TensorMethods) {
  expect_one_at(forward_with("out = out.sum(dim=-1)"), "out.sum");
  expect_one_at(forward_with("out.exp_()"), "out.exp_");
  expect_one_at(forward_with("out = self.weight.matmul(out)"), "self.weight.matmul");
  expect_one_at(forward_with("out = torch.empty_like(x).add(y)"), "torch.empty_like(x).add");
  expect_one_at(forward_with("out = torch.Tensor.relu(out)"), "torch.Tensor.relu");
}

TEST(TorchComputeInForwardRule, MatmulOperators) {
  expect_one_at(forward_with("out = x @ y"), "x @ y");
  expect_one_at(forward_with("out @= y"), "out @= y");
}

TEST(TorchComputeInForwardRule, LessCommonTorchFunctionsCountAsCompute) {
  expect_one_at(forward_with("out = torch.logaddexp(out, y)"), "torch.logaddexp");
  expect_one_at(forward_with("out = torch.linalg.vector_norm(out)"), "torch.linalg");
  expect_one_at(forward_with("out = torch.special.erf(out)"), "torch.special");
}

TEST(TorchComputeInForwardRule, ComputeFunctionPassedAsValue) {
  expect_one_at(forward_with("out = list(map(torch.exp, [out]))[0]"), "torch.exp");
}

TEST(TorchComputeInForwardRule, ConcatenationOnlyWarns) {
  const std::string source = forward_with("out = torch.cat([out, y])");
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
  EXPECT_EQ(findings[0].location, location_of(source, "torch.cat"));
}

TEST(TorchComputeInForwardRule, LenientProfileWarns) {
  const std::vector<Finding> findings = check(forward_with("out = torch.softmax(out, -1)"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(TorchComputeInForwardRule, AllowedHostCodeIsClean) {
  const std::string source = with_prelude(R"PY(
import math


class ModelNew(nn.Module):
    """Computes torch.softmax(x) with Triton; never calls F.softmax or x.sum()."""

    BLOCK = 1024

    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.weight = nn.Parameter(torch.randn(dim))

    def forward(self, x, y):
        # torch.matmul would be cheating; this comment names it only.
        note = "torch.softmax(x) is what the reference does"
        rows, cols = x.shape
        block = max(min(triton.next_power_of_2(cols), self.BLOCK), 16)
        total = sum([rows, cols]) + math.ceil(math.log2(cols))
        x2 = x.view(rows, cols).reshape(-1).contiguous().to(torch.float32).float()
        x3 = x.transpose(0, 1).permute(1, 0).unsqueeze(0).squeeze(0).flatten().narrow(0, 0, 4)
        out = torch.empty((rows, cols), dtype=x.dtype, device=x.device)
        buf = torch.zeros_like(out).clone()
        buf.copy_(out)
        buf.zero_()
        pieces = x.split(2)
        stride = x.stride(0) * x.numel() * x.element_size() + x.dim() + x.size(0)
        w = self.linear.weight
        b = self.linear.bias
        v = self.weight
        shapes = [3, 1, 2]
        shapes.sort()
        seen = set()
        seen.add(cols)
        launch_copy(x2)
        return out
)PY");
  EXPECT_TRUE(check(source).empty()) << check(source).front().message;
}

TEST(TorchComputeInForwardRule, OwnMethodsNamedLikeTensorMethods) {
  const std::string source = with_prelude(R"PY(

class Ops:
    def sum(self, t):
        return launch_copy(t)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ops = Ops()

    def softmax(self, x):
        return launch_copy(x)

    def forward(self, x):
        return self.ops.sum(self.softmax(x))
)PY");
  EXPECT_TRUE(check(source).empty());
}

TEST(TorchComputeInForwardRule, CodeOutsideTheForwardPathIsIgnored) {
  const std::string source = with_prelude(R"PY(
SCALE = torch.tensor(2.0).exp()


def reference(x):
    return torch.softmax(x, dim=-1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4).add(1.0))

    def forward(self, x):
        return launch_copy(x)
)PY");
  EXPECT_TRUE(check(source).empty());
}

TEST(TorchComputeInForwardRule, KernelBodiesAreTritonNotTorch) {
  const std::string source = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + cols, e / tl.sum(e, axis=0), mask=cols < n)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        softmax_kernel[(1,)](x, out, x.numel(), BLOCK=triton.next_power_of_2(x.numel()))
        return out
)PY";
  EXPECT_TRUE(check(source).empty());
}

TEST(TorchComputeInForwardRule, CustomOpsOfTheCandidateAreAllowed) {
  const std::string source = with_prelude(R"PY(

@torch.library.custom_op("mylib::copy", mutates_args=())
def copy_op(x: torch.Tensor) -> torch.Tensor:
    return launch_copy(x)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.ops.mylib.copy(x)
)PY");
  EXPECT_TRUE(check(source).empty());
}

TEST(TorchComputeInForwardRule, ParameterHolderModulesAreNotCalls) {
  // Reading nn.Linear's parameters (as the fp16 linear problem's solution does) is fine.
  const std::string source = forward_with("w, b = self.linear.weight, self.linear.bias",
                                          "        self.linear = nn.Linear(4, 4, dtype=torch.float16)\n");
  EXPECT_TRUE(check(source).empty());
}

TEST(TorchComputeInForwardRule, FullwidthSpellingsNameWhatPythonNames) {
  // Python reads `ｔｏｒｃｈ.ｓｏｆｔｍａｘ` as `torch.softmax` (NFKC), and so does the rule.
  const std::string source = forward_with("out = ｔｏｒｃｈ.ｓｏｆｔｍａｘ(x, -1)");
  const auto findings = check(source);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_TRUE(testing::mentions(findings[0], "torch.softmax"));
}

TEST(TorchComputeInForwardRule, CallablesHandedToTritonAreReachable) {
  // Triton calls these during a launch from forward: heuristics values, config pre-hooks, autotune
  // pruning and pre-run hooks run candidate code as much as forward's own calls do.
  const std::string heuristics = with_prelude(
      "\n\n@triton.heuristics({'B': lambda args: args['x'].softmax(-1).sum().item()})\n@triton.jit\n"
      "def h_kernel(x, B: tl.constexpr):\n    pass\n\n\nclass ModelNew(nn.Module):\n"
      "    def forward(self, x):\n        h_kernel[(1,)](x)\n        return launch_copy(x)\n");
  EXPECT_FALSE(check(heuristics).empty());
  const std::string pre_hook = with_prelude(
      "\n\ndef fill(nargs):\n    nargs['out'].copy_(torch.exp(nargs['x']))\n\n\n"
      "@triton.autotune(configs=[triton.Config({'B': 16}, pre_hook=fill)], key=['n'])\n@triton.jit\n"
      "def a_kernel(x, out, n, B: tl.constexpr):\n    pass\n\n\nclass ModelNew(nn.Module):\n"
      "    def forward(self, x):\n        out = torch.empty_like(x)\n        a_kernel[(1,)](x, out, "
      "x.numel())\n"
      "        return out\n");
  expect_one_at(pre_hook, "torch.exp");
  const std::string run_hook = with_prelude(
      "\n\ndef hook(*args, **kwargs):\n    kwargs['out'].copy_(torch.exp(kwargs['x']))\n\n\n"
      "copy_kernel.add_pre_run_hook(hook)\n\n\nclass ModelNew(nn.Module):\n"
      "    def forward(self, x):\n        return launch_copy(x)\n");
  expect_one_at(run_hook, "torch.exp");
}

// A problem whose Model is itself a Triton program that reduces its kernel's output in PyTorch.
std::string triton_problem_with(std::string_view line) {
  return with_prelude(
      "\n\nclass Model(nn.Module):\n    def forward(self, x):\n        out = launch_copy(x)\n        " +
      std::string(line) + "\n        return out\n");
}

TEST(TorchComputeInForwardRule, ComputeATritonReferenceRunsTooOnlyWarns) {
  const std::string candidate = forward_with("out = out.sum(dim=0)");
  const auto findings = testing::run_rule(TorchComputeInForwardRule(), candidate, Profile::strict,
                                          triton_problem_with("out = torch.sum(out, dim=0)"));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
  EXPECT_TRUE(testing::mentions(findings[0], "reference parity")) << findings[0].message;
  EXPECT_TRUE(testing::mentions(findings[0], "`sum`"));
}

TEST(TorchComputeInForwardRule, ComputeTheReferenceDoesNotRunStillRejects) {
  const std::string candidate = forward_with("out = torch.softmax(out, dim=-1)");
  const auto findings = testing::run_rule(TorchComputeInForwardRule(), candidate, Profile::strict,
                                          triton_problem_with("out = out.sum(dim=0)"));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::reject);
}

TEST(TorchComputeInForwardRule, APyTorchReferenceGrantsNothing) {
  // A KernelBench problem computes the op in PyTorch: that is what the candidate must write in Triton.
  const std::string candidate = forward_with("out = out.sum(dim=0)");
  const std::string pytorch_problem =
      "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
      "        return x.sum(dim=0)\n";
  const auto findings =
      testing::run_rule(TorchComputeInForwardRule(), candidate, Profile::strict, pytorch_problem);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::reject);
  const auto broken = testing::run_rule(TorchComputeInForwardRule(), candidate, Profile::strict, "def (:");
  ASSERT_EQ(broken.size(), 1U);
  EXPECT_EQ(broken[0].severity, Severity::reject);
}

}  // namespace rules_torch_compute_in_forward_test
}  // namespace kforge::rules
