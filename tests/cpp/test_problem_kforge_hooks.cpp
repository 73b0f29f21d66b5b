#include <gtest/gtest.h>

#include <string>

#include "problem/kforge_hooks.hpp"

namespace kforge::problem {
namespace {

constexpr const char* kProblem = R"("""Softmax."""

import torch

ROWS = 4096
COLS = 16384

# COLS > 8192 so the solution's column loop runs twice.
KFORGE_SMALL = {
    "ROWS": 37,
    "COLS": 10000,
}


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]
)";

TEST(KforgeHooks, FindsTheSmallSizesOnlyAtModuleLevel) {
  EXPECT_TRUE(defines_small_sizes(kProblem));
  EXPECT_TRUE(defines_small_sizes("KFORGE_SMALL: dict = {'N': 3}\n"));
  EXPECT_FALSE(defines_small_sizes("N = 4\n"));
  EXPECT_FALSE(defines_small_sizes("def f():\n    KFORGE_SMALL = {'N': 3}\n"));
  EXPECT_FALSE(defines_small_sizes("x = 'KFORGE_SMALL = {}'\n"));
  EXPECT_FALSE(defines_small_sizes("print(KFORGE_SMALL)\n"));
  EXPECT_FALSE(defines_small_sizes("KFORGE_SMALL_NOT = {}\n"));
}

TEST(KforgeHooks, AModelSeesTheProblemWithoutTheHookAndItsComment) {
  const auto shown = without_kforge_hooks(kProblem);
  EXPECT_EQ(shown.find("KFORGE"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("10000"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("column loop"), std::string::npos) << shown;
  EXPECT_NE(shown.find("COLS = 16384\n\n\nclass Model"), std::string::npos) << shown;
  EXPECT_NE(shown.find("def get_inputs():"), std::string::npos);
}

TEST(KforgeHooks, ASourceWithoutHooksIsUnchanged) {
  const std::string source = "import torch\n\n\nN = 3\n\n\nclass Model:\n    KFORGE_SMALL = 1\n";
  EXPECT_EQ(without_kforge_hooks(source), source);
}

}  // namespace
}  // namespace kforge::problem
