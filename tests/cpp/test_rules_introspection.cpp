#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_introspection.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(IntrospectionRule(), source, profile);
}

std::string model_with(std::string_view forward_line, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_line) + "\n        return launch_copy(x)\n");
}

void expect_one_at(const std::string& source, std::string_view needle, int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "introspection");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(IntrospectionRule, Metadata) {
  const IntrospectionRule rule;
  EXPECT_EQ(rule.id(), "introspection");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(IntrospectionRule, InspectAndGcImportsAreReported) {
  const std::string source = "import inspect\n" + model_with("frame = inspect.currentframe()");
  expect_one_at(source, "import inspect");
  EXPECT_TRUE(testing::mentions(check(source)[0], "import of `inspect`"));
  expect_one_at("import gc as collector\n" + model_with("objs = collector.get_objects()"), "import gc");
  expect_one_at("from inspect import stack\n" + model_with("s = stack()"), "from inspect");
}

TEST(IntrospectionRule, SysFrameAndTracingFunctions) {
  expect_one_at("import sys\n" + model_with("frame = sys._getframe(1)"), "sys._getframe");
  expect_one_at("import sys as system\n" + model_with("system.settrace(None)"), "system.settrace");
  expect_one_at("from sys import setprofile\n" + model_with("setprofile(None)"), "setprofile(None)");
}

TEST(IntrospectionRule, FrameAndCodeAttributes) {
  expect_one_at(model_with("caller = self.frame.f_back.f_locals"), "self.frame.f_back.f_locals");
  expect_one_at(model_with("g = self.forward.__globals__"), "self.forward.__globals__");
  expect_one_at(model_with("consts = launch_copy.__code__.co_consts"), "launch_copy.__code__.co_consts");
  expect_one_at(model_with("frame = getattr(self.tb, \"tb_frame\")"), "getattr(self.tb");
}

TEST(IntrospectionRule, TracebackStackWalking) {
  expect_one_at("import traceback\n" + model_with("stack = traceback.extract_stack()"),
                "traceback.extract_stack");
}

TEST(IntrospectionRule, GlobalsAndLocalsWrites) {
  expect_one_at(model_with("ref = globals()[\"Model\"]"), "globals()");
  expect_one_at(model_with("locals()[\"y\"] = x"), "locals()");
  expect_one_at(model_with("vars().update(y=x)"), "vars()");
}

TEST(IntrospectionRule, LenientProfileWarns) {
  const std::vector<Finding> findings = check("import gc\n" + model_with("pass"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(IntrospectionRule, HonestLookalikesAreClean) {
  const std::string source = with_prelude(R"PY(
import sys
import traceback


class ModelNew(nn.Module):
    """Never calls inspect.stack() or sys._getframe(); this docstring only names them."""

    def forward(self, x):
        # f_back and globals() appear in this comment only.
        names = dict(locals())
        if x.dim() != 2:
            traceback.print_exc()
            sys.exit(1)
        code_name = "f_locals"
        return launch_copy(x)
)PY");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
}

TEST(IntrospectionRule, FindsIntrospectionAnywhere) {
  const std::string source = "import sys\nCALLER = sys._getframe(0)\n" + model_with("pass");
  expect_one_at(source, "sys._getframe");
}

}  // namespace
}  // namespace kforge::rules
