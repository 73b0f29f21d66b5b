#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "optimize/program_order.hpp"
#include "optimize/tunable_knobs.hpp"
#include "source/python_parser.hpp"
#include "test_file_text.hpp"

namespace kforge::optimize {
namespace {

constexpr const char* kTwoDimensional = R"(import torch
import triton
import triton.language as tl


@triton.jit
def tile_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """One BLOCK x BLOCK tile per program."""
    row = tl.program_id(0) * BLOCK
    col = tl.program_id(axis=1) * BLOCK
    batch = tl.program_id(2)
    tl.store(out_ptr + row + col + batch, tl.load(x_ptr + row))


@triton.jit
def flat_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(x_ptr + pid, 0)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        tile_kernel[(4, 4, 2)](x, out, x.numel(), BLOCK=16)
        flat_kernel[(4,)](x, x.numel(), BLOCK=16)
        return out
)";

std::vector<const Knob*> order_knobs(const KnobSearch& search) {
  std::vector<const Knob*> found;
  for (const auto& knob : search.knobs) {
    if (knob.kind == KnobKind::program_order) {
      found.push_back(&knob);
    }
  }
  return found;
}

std::vector<long long> with_order(const KnobSearch& search, long long group) {
  std::vector<long long> values;
  for (const auto& knob : search.knobs) {
    values.push_back(knob.kind == KnobKind::program_order ? group : knob.value);
  }
  return values;
}

TEST(ProgramOrder, AKernelReadingBothGridAxesGetsAKnobAOneDimensionalKernelNone) {
  const auto search = find_knobs(kTwoDimensional);
  const auto knobs = order_knobs(search);
  ASSERT_EQ(knobs.size(), 1U);
  EXPECT_EQ(knobs.front()->kernels, std::vector<std::string>{"tile_kernel"});
  EXPECT_EQ(knobs.front()->value, 0);
  EXPECT_EQ(knobs.front()->choices, (std::vector<long long>{0, 1, 4, 8, 16}));
  EXPECT_EQ(knob_kind_name(KnobKind::program_order), "program_order");
  EXPECT_TRUE(search.fixed.empty()) << search.fixed.front();
}

TEST(ProgramOrder, ValueZeroKeepsTheSourceAGroupRewritesOnlyTheAxisZeroAndOneIds) {
  const auto search = find_knobs(kTwoDimensional);
  EXPECT_EQ(rewrite_knobs(kTwoDimensional, search.knobs, with_order(search, 0)), kTwoDimensional);
  const auto rewritten = rewrite_knobs(kTwoDimensional, search.knobs, with_order(search, 8));
  EXPECT_TRUE(source::parse_module(rewritten).ok()) << rewritten;
  // The prologue comes after the docstring, at the body's indentation, and is computed from the grid.
  EXPECT_NE(rewritten.find(
                "\"\"\"One BLOCK x BLOCK tile per program.\"\"\"\n    # kforge program order: groups of 8"),
            std::string::npos)
      << rewritten;
  EXPECT_NE(rewritten.find("    _kf_lin = tl.program_id(0) + tl.program_id(1) * _kf_np0\n"),
            std::string::npos);
  EXPECT_NE(rewritten.find("    _kf_rows = tl.minimum(_kf_np0 - _kf_first, 8)\n"), std::string::npos);
  EXPECT_NE(rewritten.find("row = _kf_pid_0 * BLOCK\n"), std::string::npos);
  EXPECT_NE(rewritten.find("col = _kf_pid_1 * BLOCK\n"), std::string::npos);
  EXPECT_NE(rewritten.find("batch = tl.program_id(2)\n"), std::string::npos) << "axis 2 is not reordered";
  EXPECT_NE(rewritten.find("def flat_kernel(x_ptr, n, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n"),
            std::string::npos)
      << "the 1-D kernel is untouched";
  EXPECT_THROW(rewrite_knobs(kTwoDimensional, search.knobs, with_order(search, 3)), std::invalid_argument);
}

TEST(ProgramOrder, AReorderedKernelIsNotReorderedAgain) {
  const auto search = find_knobs(kTwoDimensional);
  const auto rewritten = rewrite_knobs(kTwoDimensional, search.knobs, with_order(search, 4));
  const auto again = find_knobs(rewritten);
  EXPECT_TRUE(order_knobs(again).empty());
  ASSERT_EQ(again.fixed.size(), 1U);
  EXPECT_NE(again.fixed.front().find("program order of tile_kernel: it already has names starting with _kf_"),
            std::string::npos)
      << again.fixed.front();
}

TEST(ProgramOrder, IdsThatCannotBeRewrittenAreReportedNotTouched) {
  const std::string computed_axis = R"(import triton
import triton.language as tl


@triton.jit
def k(x_ptr, AXIS: tl.constexpr):
    a = tl.program_id(0)
    b = tl.program_id(1)
    c = tl.program_id(AXIS)
    tl.store(x_ptr + a + b + c, 0)
)";
  auto search = find_knobs(computed_axis);
  EXPECT_TRUE(order_knobs(search).empty());
  ASSERT_EQ(search.fixed.size(), 1U);
  EXPECT_NE(search.fixed.front().find("program order of k: a program_id call whose axis is not a literal"),
            std::string::npos);

  const std::string two_aliases = R"(import triton
import triton.language as tl
import triton.language as language


@triton.jit
def k(x_ptr):
    a = tl.program_id(0)
    b = language.program_id(1)
    tl.store(x_ptr + a + b, 0)
)";
  search = find_knobs(two_aliases);
  EXPECT_TRUE(order_knobs(search).empty());
  ASSERT_EQ(search.fixed.size(), 1U);
  EXPECT_NE(search.fixed.front().find("called as tl.program_id and language.program_id"), std::string::npos);

  const std::string one_line = R"(import triton
import triton.language as tl


@triton.jit
def k(x_ptr): tl.store(x_ptr + tl.program_id(0) + tl.program_id(1), 0)
)";
  search = find_knobs(one_line);
  EXPECT_TRUE(order_knobs(search).empty());
  ASSERT_EQ(search.fixed.size(), 1U);
  EXPECT_NE(search.fixed.front().find("does not start a line of its own"), std::string::npos);
}

TEST(ProgramOrder, TheTwoDimensionalMatmulTestCandidateHasTheKnobNextToItsTiles) {
  const auto source = test_support::file_text(std::filesystem::path(KFORGE_SOURCE_DIR) /
                                              "tests/data/optimize/matmul_fp16_2d_grid.py");
  const auto search = find_knobs(source);
  ASSERT_EQ(order_knobs(search).size(), 1U);
  EXPECT_NE(order_knobs(search).front()->where.find("program order of matmul_kernel at "), std::string::npos);
  const auto rewritten = rewrite_knobs(source, search.knobs, with_order(search, 8));
  EXPECT_NE(rewritten.find("pid_m = _kf_pid_0\n    pid_n = _kf_pid_1\n"), std::string::npos) << rewritten;
  EXPECT_TRUE(source::parse_module(rewritten).ok());
}

TEST(ProgramOrder, KnobsThatOverlapAreRefused) {
  const auto search = find_knobs(kTwoDimensional);
  auto knobs = search.knobs;
  auto copy = *order_knobs(search).front();
  copy.location.column += 1;  // a second span starting inside the first
  copy.literal = copy.literal.substr(1);
  knobs.push_back(copy);
  auto values = with_order(search, 0);
  values.push_back(0);
  EXPECT_THROW(rewrite_knobs(kTwoDimensional, knobs, values), std::invalid_argument);
}

}  // namespace
}  // namespace kforge::optimize
