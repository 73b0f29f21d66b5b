#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_native_code.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_native_code_test {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(NativeCodeRule(), source, profile);
}

std::string model_with(std::string_view forward_line, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_line) + "\n        return launch_copy(x)\n");
}

void expect_one_at(const std::string& source, std::string_view needle, int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "native-code");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(NativeCodeRule, Metadata) {
  const NativeCodeRule rule;
  EXPECT_EQ(rule.id(), "native-code");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(NativeCodeRule, ForeignFunctionInterfacesAreReportedAtTheImport) {
  const std::string source = "import ctypes\n" + model_with("ctypes.memmove(0, 0, 0)");
  expect_one_at(source, "import ctypes");
  EXPECT_TRUE(testing::mentions(check(source)[0], "import of `ctypes`"));
  expect_one_at("from cffi import FFI\n" + model_with("pass"), "from cffi");
  expect_one_at("import cupy as cp\n" + model_with("pass"), "import cupy");
  expect_one_at("from numba import cuda\n" + model_with("pass"), "from numba");
  expect_one_at("from cuda import cudart\n" + model_with("pass"), "from cuda");
  expect_one_at(model_with("import ctypes.util"), "import ctypes");
}

TEST(NativeCodeRule, OtherCompilersAndKernelLibraries) {
  expect_one_at("import jax.numpy as jnp\n" + model_with("pass"), "import jax");
  expect_one_at("from flash_attn import flash_attn_func\n" + model_with("pass"), "from flash_attn");
  expect_one_at("from torch.utils.cpp_extension import load_inline\n" + model_with("pass"),
                "from torch.utils");
  expect_one_at("import kforge.worker.judge\n" + model_with("pass"), "import kforge");
  expect_one_at("from triton.tools import compile as aot\n" + model_with("pass"), "from triton.tools");
}

TEST(NativeCodeRule, TorchCompilersThroughTorch) {
  expect_one_at(model_with("fast = torch.compile(launch_copy)"), "torch.compile");
  expect_one_at(model_with("f = torch.jit.script(launch_copy)"), "torch.jit.script");
  expect_one_at(model_with("y = torch._C._nn.gelu(x)"), "torch._C._nn.gelu");
  expect_one_at(model_with("k = torch.cuda.jiterator._create_jit_fn(\"\")"), "torch.cuda.jiterator");
  expect_one_at("import torch._dynamo\n" + model_with("pass"), "import torch._dynamo");
  expect_one_at(model_with("torch.ops.load_library(\"libcheat.so\")"), "torch.ops.load_library");
  expect_one_at(model_with(R"(lib = torch.library.Library("aten", "IMPL"))"), "torch.library.Library");
}

TEST(NativeCodeRule, InductorGeneratedCodeMayUseItsAllocatorStreamAndJitHelpers) {
  // What torch.compile's Triton output imports (TritonBench-G's fused_layernorm_triton): no native compute.
  const std::string source =
      "from torch._C import _cuda_getCurrentRawStream as get_raw_stream\n"
      "from torch._inductor.runtime import triton_helpers\n"
      "from torch._inductor.runtime.triton_helpers import libdevice\n"
      "empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda\n" +
      model_with("buf = empty_strided_cuda((4, 4), (4, 1), torch.float32)\n        s = get_raw_stream(0)");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
  // The rest of torch._C and torch._inductor stays forbidden, also next to an allowed name.
  expect_one_at("from torch._C import _cuda_getCurrentRawStream, _nn\n" + model_with("pass"),
                "from torch._C");
  expect_one_at("from torch._inductor import compile_fx\n" + model_with("pass"), "from torch._inductor");
}

TEST(NativeCodeRule, CompiledBinariesThroughTriton) {
  expect_one_at(model_with("mod = triton.runtime.driver.active.utils.load_binary(\"k\", self.cubin, 0, 0)"),
                "triton.runtime");
}

TEST(NativeCodeRule, LenientProfileWarns) {
  const std::vector<Finding> findings = check("import ctypes\n" + model_with("pass"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(NativeCodeRule, HonestLookalikesAreClean) {
  const std::string source = with_prelude(R"PY(


@torch.library.custom_op("mylib::copy", mutates_args=())
def copy_op(x: torch.Tensor) -> torch.Tensor:
    return launch_copy(x)


class ModelNew(nn.Module):
    """Uses neither ctypes nor torch.compile; the docstring only names them."""

    def forward(self, x):
        # import ctypes  <- a comment, not code
        if torch.jit.is_scripting():
            return x
        props = torch.cuda.get_device_properties(0)
        sms = triton.runtime.driver.active.utils.get_device_properties(0)
        return torch.ops.mylib.copy(x)
)PY");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
}

}  // namespace rules_native_code_test
}  // namespace kforge::rules
