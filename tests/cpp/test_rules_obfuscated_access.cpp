#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_obfuscated_access.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_obfuscated_access_test {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(ObfuscatedAccessRule(), source, profile);
}

std::string model_with(std::string_view forward_line, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_line) + "\n        return launch_copy(x)\n");
}

void expect_one_at(const std::string& source, std::string_view needle, int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "obfuscated-access");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(ObfuscatedAccessRule, Metadata) {
  const ObfuscatedAccessRule rule;
  EXPECT_EQ(rule.id(), "obfuscated-access");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(ObfuscatedAccessRule, ComputedGetattrOnTorch) {
  const std::string source = model_with(R"(op = getattr(torch, "soft" + "max"))");
  expect_one_at(source, "getattr(torch");
  EXPECT_TRUE(testing::mentions(check(source)[0], "computed attribute name on `torch`"));
}

TEST(ObfuscatedAccessRule, ComputedGetattrOnAliasedModules) {
  expect_one_at("import torch.nn.functional as F\n" + model_with("op = getattr(F, self.name)"), "getattr(F");
  expect_one_at(model_with("ok = hasattr(torch.Tensor, self.name)"), "hasattr(torch.Tensor");
  expect_one_at("from torch import nn as N\n" + model_with("op = getattr(N.functional, self.name)"),
                "getattr(N");
}

TEST(ObfuscatedAccessRule, NameAssembledAtRuntimeOnAnyObject) {
  expect_one_at(model_with(R"(op = getattr(x, "".join(["s", "um"])))"), "getattr(x");
  expect_one_at(model_with("op = getattr(x, f\"{self.prefix}max\")"), "getattr(x");
}

TEST(ObfuscatedAccessRule, CodeFromStrings) {
  expect_one_at(model_with("y = eval(\"x.sum()\")"), "eval(");
  expect_one_at(model_with("exec(self.code)"), "exec(");
  expect_one_at(model_with(R"(code = compile("1", "<s>", "eval"))"), "compile(");
  expect_one_at(model_with("m = __import__(\"torch\")"), "__import__");
}

TEST(ObfuscatedAccessRule, ImportlibAndBuiltinsImportsAreReported) {
  const std::string source = "import importlib\n" + model_with("m = importlib.import_module(\"torch\")");
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U);  // the import; its uses are not reported again
  EXPECT_EQ(findings[0].location, (source::SourceLocation{1, 1}));
  expect_one_at("from importlib import import_module as load\n" + model_with("m = load(\"torch\")"),
                "from importlib");
  expect_one_at("import builtins\n" + model_with("f = builtins.eval"), "import builtins");
  expect_one_at("import marshal\n" + model_with("pass"), "import marshal");
}

TEST(ObfuscatedAccessRule, BuiltinsDunder) {
  expect_one_at(model_with(R"(f = __builtins__["ev" + "al"])"), "__builtins__");
  expect_one_at(model_with("f = __builtins__.eval"), "__builtins__");
}

TEST(ObfuscatedAccessRule, SysModulesAndNamespaces) {
  expect_one_at("import sys\n" + model_with("t = sys.modules[\"torch\"]"), "sys.modules");
  expect_one_at(model_with("f = torch.nn.functional.__dict__[\"relu\"]"), "torch.nn.functional.__dict__");
  expect_one_at(model_with("f = vars(torch)[self.name]"), "vars(torch)");
  expect_one_at(model_with("f = object.__getattribute__(torch, self.name)"), "object.__getattribute__");
}

TEST(ObfuscatedAccessRule, DecodedPayloads) {
  expect_one_at("import base64\n" + model_with("src = base64.b64decode(self.blob)"), "base64.b64decode");
  expect_one_at("import zlib\n" + model_with("src = zlib.decompress(self.blob)"), "zlib.decompress");
  expect_one_at(model_with("src = bytes.fromhex(self.blob)"), "bytes.fromhex");
}

TEST(ObfuscatedAccessRule, AnywhereInTheModule) {
  const std::string source = "import torch\nSOFTMAX = eval(\"torch.softmax\")\n" + model_with("pass");
  expect_one_at(source, "eval(");
}

TEST(ObfuscatedAccessRule, LenientProfileWarns) {
  const std::vector<Finding> findings = check(model_with("y = eval(\"1\")"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(ObfuscatedAccessRule, HonestLookalikesAreClean) {
  const std::string source = with_prelude(R"PY(
import re

PATTERN = re.compile(r"\d+")


class ModelNew(nn.Module):
    """Calls getattr(torch, name) never; eval and exec appear only in this docstring."""

    def __init__(self, use_bias=True):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4)) if use_bias else None
        self.names = ["a", "b"]

    def evaluate(self, x):
        return launch_copy(x)

    def forward(self, x):
        # eval(...) would be forbidden; this comment only names it.
        bias = getattr(self, "bias", None)
        has = hasattr(self, "bias")
        for name in self.names:
            value = getattr(self, name, None)
        block = getattr(triton, "next_power_of_2")(x.numel())
        text = "exec(code) and __import__('os')"
        return self.evaluate(x)
)PY");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
}

TEST(ObfuscatedAccessRule, OwnObjectsWithComputedNamesAreAllowed) {
  const std::string source = model_with("w = getattr(self, \"w_\" + str(self.index))");
  EXPECT_TRUE(check(source).empty());
}

TEST(ObfuscatedAccessRule, AssignmentTargetsBelongToMonkeypatching) {
  EXPECT_TRUE(check("import sys\n" + model_with("sys.modules[\"x\"] = None")).empty());
}

}  // namespace rules_obfuscated_access_test
}  // namespace kforge::rules
