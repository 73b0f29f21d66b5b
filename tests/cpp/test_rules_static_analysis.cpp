#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "rules/static_analysis.hpp"
#include "source/code_extraction.hpp"

namespace kforge::rules {
namespace {

using Names = std::vector<std::string>;

constexpr std::string_view kVectorAdd = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def triton_add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    assert x.is_cuda and y.is_cuda
    output = torch.empty_like(x)
    n_elements = output.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, output, n_elements, BLOCK_SIZE=1024)
    return output


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return triton_add(a.contiguous(), b.contiguous())
)PY";

constexpr std::string_view kAutotunedMatmul = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl


def get_autotune_configs():
    return [
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_stages=4, num_warps=4),
    ]


@triton.autotune(configs=get_autotune_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    """Kernel for computing C = A x B, grouped ordering for L2 reuse."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


class ModelNew(nn.Module):
    """Matmul with an optional fused activation."""

    def __init__(self, activation: str = ""):
        super().__init__()
        self.activation = activation

    def _matmul(self, a, b):
        assert a.shape[1] == b.shape[0], "Incompatible dimensions"
        M, K = a.shape
        K, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=torch.float16)
        grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)
        matmul_kernel[grid](
            a, b, c,
            M, N, K,
            a.stride(0), a.stride(1),
            b.stride(0), b.stride(1),
            c.stride(0), c.stride(1),
            ACTIVATION=self.activation,
        )
        return c

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return self._matmul(A.half(), B.half())
)PY";

constexpr std::string_view kTwoKernelSoftmax = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, max_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(max_ptr + row, tl.max(x, axis=0))


@triton.jit
def softmax_kernel(out_ptr, x_ptr, max_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    numerator = tl.exp(x - tl.load(max_ptr + row))
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * stride + cols, numerator / denominator, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        block = triton.next_power_of_2(n_cols)
        row_max = torch.empty(n_rows, device=x.device, dtype=x.dtype)
        out = torch.empty_like(x)
        row_max_kernel[(n_rows,)](x, row_max, n_cols, x.stride(0), BLOCK=block)
        softmax_kernel[(n_rows,)](out, x, row_max, n_cols, x.stride(0), BLOCK=block,
                                  num_warps=4 if block < 2048 else 8)
        return out
)PY";

// Defines a kernel but computes with PyTorch: the case the rule exists for.
constexpr std::string_view kTorchFallback = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=offs < n), 0), mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
)PY";

TEST(StaticAnalysis, VectorAddWithHelperLaunch) {
  const StaticReport report = analyse_candidate(kVectorAdd);
  EXPECT_FALSE(report.syntax_error.has_value());
  EXPECT_TRUE(report.findings.empty());
  EXPECT_FALSE(report.rejected());
  EXPECT_EQ(report.kernels, (Names{"add_kernel"}));
  EXPECT_EQ(report.launched_kernels, (Names{"add_kernel"}));
  EXPECT_TRUE(report.has_model_new);
  EXPECT_TRUE(report.has_forward);
}

TEST(StaticAnalysis, AutotunedMatmulWithDeviceHelper) {
  const StaticReport report = analyse_candidate(kAutotunedMatmul);
  EXPECT_FALSE(report.rejected());
  EXPECT_EQ(report.kernels, (Names{"matmul_kernel", "leaky_relu"}));
  EXPECT_EQ(report.launched_kernels, (Names{"matmul_kernel"}));
}

TEST(StaticAnalysis, SoftmaxWithTwoKernels) {
  const StaticReport report = analyse_candidate(kTwoKernelSoftmax);
  EXPECT_FALSE(report.rejected());
  EXPECT_EQ(report.launched_kernels, (Names{"row_max_kernel", "softmax_kernel"}));
}

TEST(StaticAnalysis, KernelDefinedButForwardUsesTorch) {
  const StaticReport report = analyse_candidate(kTorchFallback);
  EXPECT_TRUE(report.rejected());
  EXPECT_EQ(report.kernels, (Names{"relu_kernel"}));
  EXPECT_TRUE(report.launched_kernels.empty());
  ASSERT_EQ(report.findings.size(), 2U);
  EXPECT_EQ(report.findings[0].rule_id, "triton-kernel-launched");
  EXPECT_EQ(report.findings[0].location, (source::SourceLocation{8, 1}));
  EXPECT_NE(report.findings[0].message.find("`relu_kernel`"), std::string::npos);
  // The torch.relu that does the work instead is reported too.
  EXPECT_EQ(report.findings[1].rule_id, "torch-compute-in-forward");
  EXPECT_EQ(report.findings[1].location, (source::SourceLocation{15, 16}));
}

TEST(StaticAnalysis, SyntaxErrorLeavesFindingsEmpty) {
  const StaticReport report = analyse_candidate("import triton\n\nx = = 1\n");
  ASSERT_TRUE(report.syntax_error.has_value());
  EXPECT_EQ(report.syntax_error->message, "invalid syntax");
  EXPECT_EQ(report.syntax_error->location, (source::SourceLocation{3, 5}));
  EXPECT_TRUE(report.findings.empty());
  EXPECT_TRUE(report.rejected());
}

TEST(StaticAnalysis, EmptyInputIsRejectedWithFindings) {
  const StaticReport report = analyse_candidate("");
  EXPECT_FALSE(report.syntax_error.has_value());
  EXPECT_TRUE(report.rejected());
  EXPECT_EQ(report.findings.size(), 2U);
  EXPECT_FALSE(report.has_model_new);
  EXPECT_FALSE(report.has_forward);
}

TEST(StaticAnalysis, LenientProfileKeepsTheLaunchRuleBlocking) {
  EXPECT_TRUE(analyse_candidate(kTorchFallback, Profile::lenient).rejected());
  EXPECT_FALSE(analyse_candidate(kVectorAdd, Profile::lenient).rejected());
}

TEST(StaticAnalysis, ExtractionsParseGivesTheSameReportAsParsingAgain) {
  for (const std::string_view source : {kVectorAdd, kTwoKernelSoftmax, kTorchFallback}) {
    const source::ExtractionResult extracted = source::extract_code(source);
    ASSERT_TRUE(extracted.ok()) << extracted.error;
    ASSERT_NE(extracted.code->parsed, nullptr);  // plain Python: extraction parsed it already
    const StaticReport reused = analyse_candidate(*extracted.code->parsed, extracted.code->code);
    const StaticReport fresh = analyse_candidate(extracted.code->code);
    EXPECT_EQ(reused.kernels, fresh.kernels);
    EXPECT_EQ(reused.launched_kernels, fresh.launched_kernels);
    ASSERT_EQ(reused.findings.size(), fresh.findings.size());
    for (std::size_t i = 0; i < fresh.findings.size(); ++i) {
      EXPECT_EQ(reused.findings[i].rule_id, fresh.findings[i].rule_id);
      EXPECT_EQ(reused.findings[i].location, fresh.findings[i].location);
      EXPECT_EQ(reused.findings[i].message, fresh.findings[i].message);
    }
  }
  const source::ParseResult broken = source::parse_module("x = = 1\n");
  EXPECT_TRUE(analyse_candidate(broken, "x = = 1\n").syntax_error.has_value());
}

TEST(StaticAnalysis, MarkdownResponseMapsBackToOriginalLines) {
  const std::string response = "Here is an optimized version:\n\n```python\n" + std::string(kTorchFallback) +
                               "```\n\nIt should be faster.\n";
  const source::ExtractionResult extracted = source::extract_code(response);
  ASSERT_TRUE(extracted.ok()) << extracted.error;
  EXPECT_TRUE(extracted.code->from_markdown);
  StaticReport report = analyse_candidate(extracted.code->code);
  shift_report_lines(report, extracted.code->line_offset);
  ASSERT_EQ(report.findings.size(), 2U);
  EXPECT_EQ(report.findings[0].location,
            (source::SourceLocation{11, 1}));  // `def relu_kernel` in the response
  EXPECT_EQ(report.findings[1].location,
            (source::SourceLocation{18, 16}));  // `torch.relu(x)` in the response
}

TEST(StaticAnalysis, ShiftReportLinesMovesSyntaxErrors) {
  StaticReport report = analyse_candidate("x = (\n");
  ASSERT_TRUE(report.syntax_error.has_value());
  shift_report_lines(report, 5);
  EXPECT_EQ(report.syntax_error->location, (source::SourceLocation{5, 5}));
}

TEST(StaticAnalysis, NeverThrowsOnArbitraryBytes) {
  std::mt19937 generator(20240601U);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 300);
  for (int round = 0; round < 300; ++round) {
    std::string input;
    const int size = length(generator);
    for (int i = 0; i < size; ++i) {
      input.push_back(static_cast<char>(byte(generator)));
    }
    EXPECT_NO_THROW(static_cast<void>(analyse_candidate(input)));
  }
}

}  // namespace
}  // namespace kforge::rules
