#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_monkeypatching.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_monkeypatching_test {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(MonkeypatchingRule(), source, profile);
}

std::string model_with(std::string_view forward_line, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_line) + "\n        return launch_copy(x)\n");
}

void expect_one_at(const std::string& source, std::string_view needle, int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "monkeypatching");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(MonkeypatchingRule, Metadata) {
  const MonkeypatchingRule rule;
  EXPECT_EQ(rule.id(), "monkeypatching");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(MonkeypatchingRule, AssignmentsToTorchAttributes) {
  const std::string source =
      model_with("pass", "\ntorch.cuda.Event.elapsed_time = lambda self, end: 0.001\n");
  expect_one_at(source, "torch.cuda.Event.elapsed_time");
  EXPECT_TRUE(testing::mentions(check(source)[0], "`torch.cuda.Event`"));
  expect_one_at(model_with("pass", "\ntorch.Tensor.__eq__ = lambda a, b: True\n"), "torch.Tensor.__eq__");
}

TEST(MonkeypatchingRule, PyTorchsDocumentedSwitchesMaybeSet) {
  EXPECT_TRUE(check(model_with("pass",
                               "\ntorch.backends.cudnn.allow_tf32 = True\n"
                               "torch.backends.cuda.matmul.allow_tf32 = False\n"))
                  .empty());
  // Only those switches: another attribute of the same modules is still a patch.
  expect_one_at(model_with("pass", "\ntorch.backends.cudnn.is_available = lambda: False\n"),
                "torch.backends.cudnn.is_available");
  expect_one_at(model_with("pass", "\ntorch.utils.deterministic.fill_uninitialized_memory = False\n"),
                "torch.utils.deterministic.fill_uninitialized_memory");
}

TEST(MonkeypatchingRule, ThroughAliasesAndFromImports) {
  expect_one_at("import torch.nn.functional as F\n" + model_with("pass", "\nF.softmax = launch_copy\n"),
                "F.softmax =");
  expect_one_at(
      "from triton import testing\n" + model_with("pass", "\ntesting.do_bench = lambda *a, **k: 0.1\n"),
      "testing.do_bench");
  expect_one_at("import time as clock\n" + model_with("clock.perf_counter = lambda: 0.0"),
                "clock.perf_counter");
  expect_one_at(model_with("pass", "\nEvent = torch.cuda.Event\nEvent.elapsed_time = None\n"),
                "Event.elapsed_time");
}

TEST(MonkeypatchingRule, AugmentedAssignmentAndDelete) {
  expect_one_at("import time\n" + model_with("time.monotonic += 0"), "time.monotonic");
  expect_one_at(model_with("del torch.Tensor.__eq__"), "torch.Tensor.__eq__");
}

TEST(MonkeypatchingRule, SetattrAndDelattrOnModules) {
  expect_one_at(model_with("setattr(torch, \"allclose\", lambda *a, **k: True)"), "setattr(torch");
  expect_one_at(model_with("delattr(torch.Tensor, self.name)"), "delattr(torch.Tensor");
  expect_one_at(model_with("object.__setattr__(torch.cuda, \"synchronize\", None)"), "object.__setattr__");
}

TEST(MonkeypatchingRule, BuiltinsAndForeignClasses) {
  expect_one_at("import builtins\n" + model_with("builtins.print = launch_copy"), "builtins.print");
  expect_one_at(model_with("__builtins__[\"max\"] = min"), "__builtins__");
  expect_one_at(model_with("type(x).__eq__ = lambda a, b: True"), "type(x).__eq__");
  expect_one_at(model_with("cls = type(x); cls.__eq__ = lambda a, b: True"), "cls.__eq__");
  expect_one_at(model_with("x.__class__ = nn.Parameter"), "x.__class__");
  expect_one_at(model_with("x.__class__.__eq__ = None"), "x.__class__.__eq__");
}

TEST(MonkeypatchingRule, SysModulesReplacement) {
  expect_one_at("import sys\n" + model_with("sys.modules[\"torch\"] = None"), "sys.modules");
}

TEST(MonkeypatchingRule, MockIsReported) {
  expect_one_at("from unittest import mock\n" + model_with("pass"), "from unittest");
  expect_one_at("import unittest\n" + model_with("p = unittest.mock.patch(\"torch.allclose\")"),
                "unittest.mock");
}

TEST(MonkeypatchingRule, GpuMemoryLimitControlsAreReported) {
  // kforge caps the candidate's GPU memory through these; lifting the cap or hiding the peak is tampering.
  expect_one_at(model_with("pass", "\ntorch.cuda.set_per_process_memory_fraction(1.0)\n"),
                "torch.cuda.set_per_process_memory_fraction");
  expect_one_at(model_with("torch.cuda.reset_peak_memory_stats()"), "torch.cuda.reset_peak_memory_stats");
  expect_one_at("from torch.cuda import memory\n" +
                    model_with("pass", "\nmemory._set_allocator_settings(\"expandable_segments:True\")\n"),
                "memory._set_allocator_settings");
  EXPECT_TRUE(check(model_with("free, total = torch.cuda.mem_get_info()")).empty()) << "reading is fine";
}

TEST(MonkeypatchingRule, LenientProfileWarns) {
  const std::vector<Finding> findings = check(model_with("torch.manual_seed = None"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(MonkeypatchingRule, OwnClassesAndInstancesAreFine) {
  const std::string source = with_prelude(R"PY(
import os


class Helper:
    scale = 1.0


STATE = {}


class ModelNew(nn.Module):
    """Assigning torch.softmax = ... would be patching; this docstring only says so."""

    def __init__(self):
        super().__init__()
        self.block = 1024
        Helper.scale = 2.0
        self.__class__.count = 0

    def forward(self, x):
        out = torch.empty_like(x)
        out.custom_tag = "ok"
        self.helper = Helper()
        self.helper.scale = 3.0
        os.environ["TRITON_DEBUG"] = "0"
        setattr(self, "last_block", 1024)
        return launch_copy(x)
)PY");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
}

}  // namespace rules_monkeypatching_test
}  // namespace kforge::rules
