#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "source/module_index.hpp"
#include "source/python_parser.hpp"

namespace kforge::source {
namespace {

using Names = std::vector<std::string>;

// Keeps the parsed module alive next to the index that points into it.
struct Indexed {
  std::unique_ptr<Module> module;
  ModuleIndex index;
};

Indexed index_of(std::string_view source) {
  ParseResult parsed = parse_module(source);
  EXPECT_TRUE(parsed.ok()) << parsed.error->message << " at " << parsed.error->location;
  Indexed indexed;
  indexed.module = std::move(parsed.module);
  if (indexed.module) {
    indexed.index = build_module_index(*indexed.module);
  }
  return indexed;
}

Names kernel_names(const ModuleIndex& index) {
  Names names;
  for (const KernelInfo& kernel : index.kernels) {
    names.push_back(kernel.name);
  }
  return names;
}

const KernelLaunch* launch_of(const ModuleIndex& index, std::string_view kernel) {
  for (const KernelLaunch& launch : index.launches) {
    if (launch.kernel == kernel) {
      return &launch;
    }
  }
  return nullptr;
}

constexpr std::string_view kPrelude = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)

@triton.jit
def mul_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass

)PY";

Indexed index_with_prelude(std::string_view body) {
  return index_of(std::string(kPrelude) + std::string(body));
}

TEST(ModuleIndex, Imports) {
  const Indexed indexed = index_of(
      "import triton\nimport triton.language as tl\nfrom triton import jit, autotune as at\n"
      "from . import sibling\nfrom ..a.b import (c as d,)\n");
  const auto& imports = indexed.index.imports;
  ASSERT_EQ(imports.size(), 5U);
  EXPECT_FALSE(imports[0].is_from);
  EXPECT_EQ(imports[0].module, "triton");
  EXPECT_EQ(imports[1].module, "triton.language");
  EXPECT_EQ(imports[1].alias, "tl");
  EXPECT_TRUE(imports[2].is_from);
  EXPECT_EQ(imports[2].module, "triton");
  ASSERT_EQ(imports[2].names.size(), 2U);
  EXPECT_EQ(imports[2].names[1].name, "autotune");
  EXPECT_EQ(imports[2].names[1].alias, "at");
  EXPECT_EQ(imports[3].level, 1);
  EXPECT_EQ(imports[3].module, "");
  EXPECT_EQ(imports[4].level, 2);
  EXPECT_EQ(imports[4].module, "a.b");
  EXPECT_EQ(imports[4].location, (SourceLocation{5, 1}));
}

TEST(ModuleIndex, KernelDecoratorForms) {
  const Indexed indexed = index_of(R"PY(import triton
import triton as tt
from triton import jit
from triton import jit as tjit
from triton.runtime.jit import jit as runtime_jit
import numba
my_jit = triton.jit

@triton.jit
def plain(x): pass

@triton.jit(do_not_specialize=["n"])
def called(x, n): pass

@tt.jit
def aliased_module(x): pass

@jit
def imported(x): pass

@tjit
def imported_alias(x): pass

@runtime_jit
def runtime(x): pass

@my_jit
def assigned_alias(x): pass

@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % 2 == 0})
@triton.jit
def tuned(x, n, BLOCK: tl.constexpr, EVEN: tl.constexpr): pass

@numba.jit
def not_triton(x): pass

@torch.jit.script
def torchscript(x): pass

@staticmethod
def plain_function(x): pass

class Holder:
    @staticmethod
    @triton.jit
    def member_kernel(x): pass

functional = triton.jit(plain_function)
tuned_functional = triton.autotune(configs=[], key=[])(triton.jit(plain_function))
)PY");
  const ModuleIndex& index = indexed.index;
  EXPECT_EQ(kernel_names(index),
            (Names{"plain", "called", "aliased_module", "imported", "imported_alias", "runtime",
                   "assigned_alias", "tuned", "member_kernel", "functional", "tuned_functional"}));
  const KernelInfo* tuned = index.find_kernel("tuned");
  ASSERT_NE(tuned, nullptr);
  EXPECT_TRUE(tuned->autotuned);
  EXPECT_TRUE(tuned->heuristics);
  EXPECT_EQ(tuned->decorators, (Names{"triton.autotune", "triton.heuristics", "triton.jit"}));
  EXPECT_EQ(tuned->location.line, 33);
  EXPECT_EQ(index.find_kernel("aliased_module")->decorators, (Names{"triton.jit"}));
  EXPECT_EQ(index.find_kernel("member_kernel")->qualified_name, "Holder.member_kernel");
  EXPECT_FALSE(index.find_kernel("plain")->autotuned);
  const KernelInfo* functional = index.find_kernel("functional");
  ASSERT_NE(functional, nullptr);
  ASSERT_NE(functional->definition, nullptr);
  EXPECT_EQ(functional->definition->name, "plain_function");
  EXPECT_EQ(index.find_kernel("not_triton"), nullptr);
}

TEST(ModuleIndex, StarImportOfTriton) {
  const Indexed indexed = index_of("from triton import *\n\n@jit\ndef k(x): pass\n");
  EXPECT_EQ(kernel_names(indexed.index), (Names{"k"}));
}

TEST(ModuleIndex, ModelNewClass) {
  const Indexed indexed = index_with_prelude(R"PY(
class ModelNew(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.dim = dim

    @torch.no_grad()
    def forward(self, x, y=None, *rest, **options):
        return x
)PY");
  ASSERT_TRUE(indexed.index.model.has_value());
  const ModelInfo& model = *indexed.index.model;
  EXPECT_EQ(model.class_name, "ModelNew");
  EXPECT_EQ(model.bases, (Names{"nn.Module"}));
  EXPECT_TRUE(model.has_init);
  EXPECT_EQ(model.init_params, (Names{"dim", "eps"}));
  EXPECT_TRUE(model.has_forward);
  EXPECT_EQ(model.forward_params, (Names{"x", "y", "rest", "options"}));
  EXPECT_EQ(model.forward_location.line, 23);
  ASSERT_NE(model.forward, nullptr);
  EXPECT_EQ(model.forward->name, "forward");
}

TEST(ModuleIndex, ModelNewWithoutForwardAndMissingModel) {
  const Indexed no_forward = index_with_prelude("class ModelNew(nn.Module):\n    def helper(self): pass\n");
  ASSERT_TRUE(no_forward.index.model.has_value());
  EXPECT_FALSE(no_forward.index.model->has_forward);
  EXPECT_EQ(no_forward.index.model->forward, nullptr);
  const Indexed no_model =
      index_with_prelude("class Model(nn.Module):\n    def forward(self, x): return x\n");
  EXPECT_FALSE(no_model.index.model.has_value());
}

TEST(ModuleIndex, ModelNewAliasAndInheritedForward) {
  const Indexed indexed = index_with_prelude(R"PY(
class Base(nn.Module):
    def forward(self, x):
        add_kernel[(1,)](x, x, x, 1, BLOCK=1)
        return x

class TritonModel(Base):
    pass

ModelNew = TritonModel
)PY");
  ASSERT_TRUE(indexed.index.model.has_value());
  EXPECT_EQ(indexed.index.model->class_name, "TritonModel");
  EXPECT_TRUE(indexed.index.model->has_forward);
  EXPECT_EQ(indexed.index.launched_kernels(), (Names{"add_kernel"}));
  EXPECT_EQ(launch_of(indexed.index, "add_kernel")->function, "Base.forward");
}

TEST(ModuleIndex, DirectLaunchInForward) {
  const Indexed indexed = index_with_prelude(R"PY(
class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        add_kernel[grid](x, y, out, n, BLOCK=1024)
        return out
)PY");
  const ModuleIndex& index = indexed.index;
  ASSERT_EQ(index.launches.size(), 1U);
  EXPECT_EQ(index.launches[0].kernel, "add_kernel");
  EXPECT_EQ(index.launches[0].function, "ModelNew.forward");
  EXPECT_EQ(index.launches[0].location, (SourceLocation{22, 9}));
  EXPECT_TRUE(index.launches[0].reachable_from_forward);
  EXPECT_FALSE(index.launches[0].via_indirection);
  EXPECT_EQ(index.launched_kernels(), (Names{"add_kernel"}));
  EXPECT_EQ(index.unlaunched_kernels(), (Names{"mul_kernel"}));
}

TEST(ModuleIndex, LaunchThroughHelperFunctionsTransitively) {
  const Indexed indexed = index_with_prelude(R"PY(
def _grid(n):
    return (triton.cdiv(n, 1024),)

def launch_add(x, y):
    out = torch.empty_like(x)
    add_kernel[_grid(x.numel())](x, y, out, x.numel(), BLOCK=1024)
    return out

@torch.no_grad()
def fused(x, y):
    return launch_add(x, y)

def unused(x):
    mul_kernel[(1,)](x, x, 1, BLOCK=1)

class ModelNew(nn.Module):
    def forward(self, x, y):
        return fused(x, y)
)PY");
  const ModuleIndex& index = indexed.index;
  EXPECT_EQ(index.launched_kernels(), (Names{"add_kernel"}));
  EXPECT_EQ(launch_of(index, "add_kernel")->function, "launch_add");
  const KernelLaunch* unused = launch_of(index, "mul_kernel");
  ASSERT_NE(unused, nullptr);
  EXPECT_FALSE(unused->reachable_from_forward);
  EXPECT_EQ(unused->function, "unused");
  EXPECT_EQ(index.reachable_functions, (Names{"ModelNew.forward", "fused", "launch_add", "_grid"}));
}

TEST(ModuleIndex, LaunchThroughSelfMethodsNestedDefsAndLambdas) {
  const Indexed indexed = index_with_prelude(R"PY(
class ModelNew(nn.Module):
    def _mul(self, x):
        def run(t):
            mul_kernel[(1,)](t, t, 1, BLOCK=1)
        run(x)
        return x

    def _add(self, x):
        go = lambda: add_kernel[(1,)](x, x, x, 1, BLOCK=1)
        go()

    def forward(self, x):
        self._add(x)
        return self._mul(x)
)PY");
  const ModuleIndex& index = indexed.index;
  EXPECT_EQ(index.launched_kernels(), (Names{"mul_kernel", "add_kernel"}));
  EXPECT_EQ(launch_of(index, "mul_kernel")->function, "ModelNew._mul.<locals>.run");
  EXPECT_EQ(launch_of(index, "add_kernel")->function, "ModelNew._add.<locals>.<lambda>");
}

TEST(ModuleIndex, LaunchThroughAliases) {
  const Indexed indexed = index_with_prelude(R"PY(
KERNELS = {"add": add_kernel}

class ModelNew(nn.Module):
    table = mul_kernel

    def __init__(self):
        super().__init__()
        self.kernel = add_kernel

    def forward(self, x, fast=True):
        k = add_kernel if fast else mul_kernel
        k[(1,)](x)
        self.kernel[(1,)](x)
        self.table[(1,)](x)
        KERNELS["add"][(1,)](x)
        return x
)PY");
  const ModuleIndex& index = indexed.index;
  EXPECT_EQ(index.launched_kernels(), (Names{"add_kernel", "mul_kernel"}));
  int reachable = 0;
  for (const KernelLaunch& launch : index.launches) {
    reachable += launch.reachable_from_forward ? 1 : 0;
    EXPECT_EQ(launch.function, "ModelNew.forward");
  }
  EXPECT_EQ(reachable, 5);  // k (two kernels), self.kernel, self.table, KERNELS["add"]
}

TEST(ModuleIndex, KernelPassedAsParameterIsAnIndirectLaunch) {
  const Indexed indexed = index_with_prelude(R"PY(
def launch(kernel, *args):
    kernel[(1,)](*args)

class ModelNew(nn.Module):
    def forward(self, x):
        launch(mul_kernel, x, x, 1)
        return x
)PY");
  const ModuleIndex& index = indexed.index;
  EXPECT_EQ(index.launched_kernels(), (Names{"mul_kernel"}));
  const KernelLaunch* launch = launch_of(index, "mul_kernel");
  ASSERT_NE(launch, nullptr);
  EXPECT_TRUE(launch->via_indirection);
  EXPECT_EQ(launch->function, "launch");
}

TEST(ModuleIndex, AutogradFunctionAndHelperModules) {
  const Indexed indexed = index_with_prelude(R"PY(
@triton.jit
def grad_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass

class AddFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        out = torch.empty_like(x)
        add_kernel[(1,)](x, y, out, 1, BLOCK=1)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad_kernel[(1,)](grad, 1, BLOCK=1)
        return grad, grad

class Scale(nn.Module):
    def forward(self, x):
        mul_kernel[(1,)](x, x, 1, BLOCK=1)
        return x

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = Scale()
        self.blocks = nn.ModuleList([Scale() for _ in range(2)])

    def forward(self, x):
        x = AddFn.apply(x, x)
        for block in self.blocks:
            x = block(x)
        return self.scale(x)
)PY");
  const ModuleIndex& index = indexed.index;
  // backward never runs in an evaluation (forward is called under torch.no_grad): not reachable.
  EXPECT_EQ(index.launched_kernels(), (Names{"add_kernel", "mul_kernel"}));
  EXPECT_EQ(launch_of(index, "add_kernel")->function, "AddFn.forward");
  EXPECT_EQ(launch_of(index, "mul_kernel")->function, "Scale.forward");
}

TEST(ModuleIndex, ReadingAHeldModulesWeightsDoesNotCallIt) {
  // An Inductor-style candidate hands the problem's weights to its kernels; the modules they belong to
  // never run. Calling a member of a held container still reaches its forward.
  const std::string model = R"PY(
class Act(nn.Module):
    def forward(self, x):
        return x

class Block(nn.Module):
    def forward(self, x):
        return x

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.ModuleDict(dict(fc=nn.Linear(8, 8), act=Act()))
        self.block = Block()
)PY";
  const Indexed reading = index_with_prelude(model + R"PY(
class ModelNew(Model):
    def forward(self, x):
        weights = [self.mlp.fc.weight, self.mlp.fc.bias, self.block.weight, self.mlp.act.weight.shape]
        add_kernel[(1,)](x, x, x, 1, BLOCK=1)
        return x
)PY");
  EXPECT_EQ(reading.index.reachable_functions, (Names{"ModelNew.forward"}));
  const Indexed calling = index_with_prelude(model + R"PY(
class ModelNew(Model):
    def forward(self, x):
        return self.mlp.act(x) + self.mlp.act.weight
)PY");
  EXPECT_EQ(calling.index.reachable_functions, (Names{"ModelNew.forward", "Act.forward"}));
}

TEST(ModuleIndex, SuperCallsAndWrappedKernels) {
  const Indexed indexed = index_with_prelude(R"PY(
from torch.library import wrap_triton

class Base(nn.Module):
    def forward(self, x):
        wrap_triton(add_kernel)[(1,)](x, x, x, 1, BLOCK=1)
        return x

class ModelNew(Base):
    def forward(self, x):
        mul_kernel.run(x, x, 1, BLOCK=1, grid=(1,), warmup=False)
        return super().forward(x)
)PY");
  // In source order of the launch sites: Base.forward comes first.
  EXPECT_EQ(indexed.index.launched_kernels(), (Names{"add_kernel", "mul_kernel"}));
}

TEST(ModuleIndex, InheritedForwardSeesOverridesAndInheritedAttributes) {
  const Indexed indexed = index_with_prelude(R"PY(
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernel = add_kernel

    def forward(self, x):
        return self._impl(x)

    def _impl(self, x):
        return x

class ModelNew(Base):
    def _impl(self, x):
        mul_kernel[(1,)](x, x, 1, BLOCK=1)
        self.kernel[(1,)](x, x, x, 1, BLOCK=1)
        return x
)PY");
  EXPECT_EQ(indexed.index.launched_kernels(), (Names{"mul_kernel", "add_kernel"}));
  EXPECT_EQ(launch_of(indexed.index, "add_kernel")->function, "ModelNew._impl");
}

TEST(ModuleIndex, TorchLibraryCustomOps) {
  const Indexed indexed = index_with_prelude(R"PY(
from torch.library import triton_op

@torch.library.custom_op("kforge::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    mul_kernel[(1,)](x, out, x.numel(), BLOCK=1024)
    return out

@triton_op("kforge::add", mutates_args={})
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    add_kernel[(1,)](x, y, out, x.numel(), BLOCK=1024)
    return out

class ModelNew(nn.Module):
    def forward(self, x, y):
        return torch.ops.kforge.add.default(torch.ops.kforge.scale(x), y)
)PY");
  EXPECT_EQ(indexed.index.launched_kernels(), (Names{"mul_kernel", "add_kernel"}));
}

TEST(ModuleIndex, KernelsDefinedButNeverLaunched) {
  const Indexed indexed = index_with_prelude(R"PY(
class ModelNew(nn.Module):
    def forward(self, x, y):
        return x + y

add_kernel[(1,)](torch.ones(1), torch.ones(1), torch.ones(1), 1, BLOCK=1)
)PY");
  const ModuleIndex& index = indexed.index;
  EXPECT_TRUE(index.launched_kernels().empty());
  EXPECT_EQ(index.unlaunched_kernels(), (Names{"add_kernel", "mul_kernel"}));
  ASSERT_EQ(index.launches.size(), 1U);
  EXPECT_EQ(index.launches[0].function, "<module>");
  EXPECT_FALSE(index.launches[0].reachable_from_forward);
}

TEST(ModuleIndex, SubscriptCallsThatAreNotLaunches) {
  const Indexed indexed = index_with_prelude(R"PY(
class ModelNew(nn.Module):
    def forward(self, x):
        handlers = [torch.relu]
        y = dict[str, int]()
        return handlers[0](x)
)PY");
  EXPECT_TRUE(indexed.index.launched_kernels().empty());
  EXPECT_TRUE(indexed.index.launches.empty());
}

TEST(ModuleIndex, FunctionsAndClassesAtModuleLevel) {
  const Indexed indexed = index_with_prelude(R"PY(
try:
    def optional_helper(): pass
except ImportError:
    pass

class ModelNew(nn.Module):
    def __init__(self): pass
    def forward(self, x): return x
)PY");
  const ModuleIndex& index = indexed.index;
  Names functions;
  for (const FunctionInfo& function : index.functions) {
    functions.push_back(function.name + (function.is_kernel ? "*" : ""));
  }
  EXPECT_EQ(functions, (Names{"add_kernel*", "mul_kernel*", "optional_helper"}));
  ASSERT_EQ(index.classes.size(), 1U);
  EXPECT_EQ(index.classes[0].name, "ModelNew");
  EXPECT_EQ(index.classes[0].methods, (Names{"__init__", "forward"}));
  EXPECT_EQ(index.classes[0].bases, (Names{"nn.Module"}));
}

TEST(ModuleIndex, RecursionAndAliasCyclesTerminate) {
  const Indexed indexed = index_with_prelude(R"PY(
a = b
b = a

def ping(x):
    return pong(x)

def pong(x):
    a[(1,)](x)
    return ping(x)

class ModelNew(nn.Module, ModelNew if False else object):
    def forward(self, x):
        return ping(x)
)PY");
  EXPECT_TRUE(indexed.index.launched_kernels().empty());
  EXPECT_EQ(indexed.index.reachable_functions, (Names{"ModelNew.forward", "ping", "pong"}));
}

TEST(ModuleIndex, LongAliasChainsStayBounded) {
  std::string source(kPrelude);
  source += "a0 = add_kernel\n";
  for (int i = 1; i < 5000; ++i) {
    source += "a" + std::to_string(i) + " = a" + std::to_string(i - 1) + "\n";
  }
  source += "class ModelNew:\n    def forward(self, x):\n        a4999[(1,)](x)\n        a10[(1,)](x)\n";
  const Indexed indexed = index_of(source);
  // Resolution is iterative: the 5000-step chain resolves as well as the short one.
  EXPECT_EQ(indexed.index.launched_kernels(), (Names{"add_kernel"}));
  EXPECT_EQ(indexed.index.launches.size(), 2U);
}

}  // namespace
}  // namespace kforge::source
