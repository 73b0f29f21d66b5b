#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_dispatch_interception.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_dispatch_interception_test {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(DispatchInterceptionRule(), source, profile);
}

std::string model_with(std::string_view forward_line, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_line) + "\n        return launch_copy(x)\n");
}

void expect_finding_at(const std::string& source, std::string_view needle) {
  const std::vector<Finding> findings = check(source);
  ASSERT_FALSE(findings.empty()) << source;
  EXPECT_EQ(findings[0].rule_id, "dispatch-interception");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle)) << findings[0].message;
}

TEST(DispatchInterceptionRule, Metadata) {
  const DispatchInterceptionRule rule;
  EXPECT_EQ(rule.id(), "dispatch-interception");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(DispatchInterceptionRule, ModeClassesUnderAnyModulePath) {
  for (const std::string_view module :
       {"torch.utils._python_dispatch", "torch.autograd.graph", "torch.utils.checkpoint",
        "torch.utils.flop_counter", "torch.utils._device", "torch.overrides"}) {
    for (const std::string_view name : {"TorchDispatchMode", "TorchFunctionMode"}) {
      const std::string source =
          "from " + std::string(module) + " import " + std::string(name) + " as M\n" + model_with("pass");
      expect_finding_at(source, "from ");
    }
  }
  expect_finding_at(model_with("pass", "import torch.utils.checkpoint as ck\nBase = ck.TorchDispatchMode"),
                    "ck.TorchDispatchMode");
  expect_finding_at(model_with("pass", "from torch._subclasses.fake_tensor import unset_fake_temporarily"),
                    "from torch._subclasses");
}

TEST(DispatchInterceptionRule, RecorderRemovalAndStackManipulation) {
  expect_finding_at(model_with("ctx = torch._library.fake_class_registry._disable_current_modes()"),
                    "torch._library");
  expect_finding_at(model_with("m = torch._C._pop_torch_dispatch_stack()"),
                    "torch._C._pop_torch_dispatch_stack");
  expect_finding_at(model_with("g = torch._C.DisableTorchFunction()"), "torch._C.DisableTorchFunction");
  expect_finding_at(model_with("torch.autograd._disable_profiler()"), "torch.autograd._disable_profiler");
}

TEST(DispatchInterceptionRule, FullwidthSpellingsAndStrings) {
  expect_finding_at(
      model_with("pass",
                 "from ｔｏｒｃｈ.ｕｔｉｌｓ._ｐｙｔｈｏｎ_ｄｉｓｐａｔｃｈ import TorchDispatchMode"),
      "from ");
  expect_finding_at(model_with("m = getattr(ck, 'TorchDispatchMode')", "import torch.utils.checkpoint as ck"),
                    "'TorchDispatchMode'");
  const auto fullwidth_string = check(model_with("m = getattr(ck, 'ＴｏｒｃｈＤｉｓｐａｔｃｈＭｏｄｅ')",
                                                 "import torch.utils.checkpoint as ck"));
  ASSERT_EQ(fullwidth_string.size(), 1U);
  EXPECT_TRUE(testing::mentions(fullwidth_string[0], "string naming `TorchDispatchMode`"));
}

TEST(DispatchInterceptionRule, TorchDispatchSubclasses) {
  expect_finding_at(model_with("pass",
                               "class Sneaky(torch.Tensor):\n    @classmethod\n"
                               "    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):\n"
                               "        return func(*args, **(kwargs or {}))"),
                    "def __torch_dispatch__");
}

TEST(DispatchInterceptionRule, HonestCodeAndDocstringsAreQuiet) {
  EXPECT_TRUE(check(model_with("with torch.no_grad():\n            pass")).empty());
  EXPECT_TRUE(
      check(model_with("pass", "'''Unlike a TorchDispatchMode, this kernel fuses everything.'''")).empty());
  EXPECT_TRUE(check(model_with("pass", "from torch.utils.checkpoint import checkpoint")).empty());
}

}  // namespace rules_dispatch_interception_test
}  // namespace kforge::rules
