#include <gtest/gtest.h>

#include <string>

#include "problem/problem_source_check.hpp"

namespace kforge::problem {
namespace problem_source_check_test {

constexpr const char* kProblem = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

def get_inputs():
    return [torch.randn(8)]

def get_init_inputs():
    return []
)";

TEST(ProblemSourceCheck, AKernelBenchProblemPasses) {
  EXPECT_EQ(kernelbench_problem_defect(kProblem), std::nullopt);
  // Bound another way: an assignment, an import alias, a star import (which may bind anything).
  std::string assigned = kProblem;
  assigned.replace(assigned.find("class Model("), 12, "class Ref(");
  EXPECT_EQ(kernelbench_problem_defect(assigned + "\nModel = Ref\n"), std::nullopt);
  EXPECT_EQ(
      kernelbench_problem_defect("from mylib import Model, get_inputs as get_inputs, get_init_inputs\n"),
      std::nullopt);
  EXPECT_EQ(kernelbench_problem_defect("from mylib import *\n"), std::nullopt);
}

TEST(ProblemSourceCheck, MissingNamesAreListed) {
  std::string no_model = kProblem;
  no_model.replace(no_model.find("class Model("), 12, "class Ref(");
  const auto defect = kernelbench_problem_defect(no_model);
  ASSERT_TRUE(defect);
  EXPECT_NE(defect->find("Model"), std::string::npos);
  EXPECT_EQ(defect->find("get_inputs,"), std::string::npos) << *defect;
  const auto empty = kernelbench_problem_defect("x = 1\n");
  ASSERT_TRUE(empty);
  EXPECT_NE(empty->find("Model, get_inputs, get_init_inputs"), std::string::npos) << *empty;
  // A name defined only inside a function does not count.
  EXPECT_TRUE(kernelbench_problem_defect("def f():\n    Model = 1\n"));
}

TEST(ProblemSourceCheck, SomethingThatIsNotPythonSaysWhere) {
  for (const char* text : {"<html><body>not python</body></html>", "def broken(:\n", "\x01\x02\xff"}) {
    const auto defect = kernelbench_problem_defect(text);
    ASSERT_TRUE(defect) << text;
    EXPECT_NE(defect->find("not Python"), std::string::npos) << *defect;
  }
}

}  // namespace problem_source_check_test
}  // namespace kforge::problem
