#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_engine.hpp"
#include "rules/static_analysis.hpp"
#include "test_rules_support.hpp"

// The default rule set as analyse_candidate() runs it: ids, severities per profile, the problem
// source reaching the precision rule, and one rule per offending node.
namespace kforge::rules {
namespace {

using testing::location_of;
using testing::with_prelude;

TEST(DefaultRules, EveryRuleIsRegisteredOnce) {
  const RuleEngine engine = RuleEngine::with_default_rules();
  std::vector<std::string> ids;
  for (const auto& rule : engine.rules()) {
    ids.emplace_back(rule->id());
    EXPECT_FALSE(rule->summary().empty()) << rule->id();
  }
  EXPECT_EQ(ids,
            (std::vector<std::string>{
                "triton-kernel-launched", "torch-compute-in-forward", "obfuscated-access", "introspection",
                "monkeypatching", "threads-and-processes", "side-stream", "file-and-network-io",
                "fallback-on-kernel-failure", "cached-state-in-forward", "native-code", "precision-downgrade",
                "host-round-trip", "python-in-kernel", "dispatch-interception"}));
}

TEST(DefaultRules, SeverityPerProfile) {
  const RuleEngine engine = RuleEngine::with_default_rules();
  for (const auto& rule : engine.rules()) {
    EXPECT_EQ(rule->severity_for(Profile::strict), Severity::reject) << rule->id();
    const Severity lenient = rule->id() == "triton-kernel-launched" ? Severity::reject : Severity::warn;
    EXPECT_EQ(rule->severity_for(Profile::lenient), lenient) << rule->id();
  }
}

std::vector<std::string> rule_ids_at(const StaticReport& report, source::SourceLocation location) {
  std::vector<std::string> ids;
  for (const Finding& finding : report.findings) {
    if (finding.location == location) {
      ids.push_back(finding.rule_id);
    }
  }
  return ids;
}

std::string model_with(std::string_view forward_line, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_line) + "\n        return launch_copy(x)\n");
}

TEST(DefaultRules, TheProblemSourceReachesThePrecisionRule) {
  const std::string candidate = model_with("x = x.half()");
  const StaticReport unknown = analyse_candidate(candidate);
  EXPECT_FALSE(unknown.rejected());
  ASSERT_EQ(unknown.findings.size(), 1U);
  EXPECT_EQ(unknown.findings[0].severity, Severity::warn);
  const StaticReport float32 =
      analyse_candidate(candidate, Profile::strict, "import torch\nX = torch.randn(4)\n");
  EXPECT_TRUE(float32.rejected());
  EXPECT_FALSE(
      analyse_candidate(candidate, Profile::lenient, "import torch\nX = torch.randn(4)\n").rejected());
  EXPECT_TRUE(analyse_candidate(candidate, Profile::strict, "import torch\nX = torch.randn(4).half()\n")
                  .findings.empty());
}

TEST(DefaultRules, OneRulePerOffendingNode) {
  struct Case {
    std::string source;
    std::string needle;
    std::string owner;
  };
  const std::vector<Case> cases = {
      {"import threading\n" + model_with("threading.Thread(target=launch_copy).start()"), "import threading",
       "threads-and-processes"},
      {"import inspect\n" + model_with("f = inspect.currentframe()"), "import inspect", "introspection"},
      {model_with("setattr(torch, self.name, launch_copy)"), "setattr(torch", "monkeypatching"},
      {"import sys\n" + model_with("sys.modules[\"torch\"] = None"), "sys.modules", "monkeypatching"},
      {"import os\n" + model_with(R"(os.environ["TRITON_INTERPRET"] = "1")"), "os.environ",
       "file-and-network-io"},
      {model_with("out = torch.load(\"ref.pt\")"), "torch.load", "file-and-network-io"},
      {model_with("fast = torch.compile(launch_copy)"), "torch.compile", "native-code"},
      {model_with("torch.ops.load_library(\"lib.so\")"), "torch.ops.load_library", "native-code"},
      {model_with("y = torch._C._nn.gelu(x)"), "torch._C", "native-code"},
      {model_with("torch.Tensor.__eq__ = None"), "torch.Tensor.__eq__", "monkeypatching"},
      {model_with("s = torch.cuda.Stream()"), "torch.cuda.Stream", "side-stream"},
  };
  for (const Case& test : cases) {
    SCOPED_TRACE(test.needle);
    const StaticReport report = analyse_candidate(test.source);
    EXPECT_EQ(rule_ids_at(report, location_of(test.source, test.needle)),
              (std::vector<std::string>{test.owner}));
  }
}

TEST(DefaultRules, DocstringsCommentsAndStringsNeverTrigger) {
  const std::string source = with_prelude(R"PY(
"""Module docstring: torch.softmax, F.gelu, eval(), import ctypes, threading.Thread, open("x"),
torch.cuda.Stream(), x.half(), sys._getframe(), torch.Tensor.__eq__ = None, self.cache = out."""


class ModelNew(nn.Module):
    """torch.matmul(a, b) @ c; os.system("ls"); setattr(torch, name, f); torch.load("x")."""

    def forward(self, x):
        # torch.compile(f); getattr(torch, name); globals(); x.sum(); x @ y; del torch.softmax
        text = "import subprocess; subprocess.run(['ls']); x.to(torch.float16)"
        other = f"{x.shape} torch.relu(x) tl.dot(a, b, allow_tf32=True)"
        return launch_copy(x)
)PY");
  const StaticReport report =
      analyse_candidate(source, Profile::strict, "import torch\nX = torch.randn(4)\n");
  EXPECT_TRUE(report.findings.empty())
      << report.findings.front().rule_id << ": " << report.findings.front().message;
}

TEST(DefaultRules, ManyViolationsEachGetTheirRule) {
  const std::string source = "import ctypes\nimport threading\n" + model_with("y = torch.softmax(x, -1)");
  std::set<std::string> ids;
  for (const Finding& finding : analyse_candidate(source).findings) {
    ids.insert(finding.rule_id);
  }
  EXPECT_EQ(ids, (std::set<std::string>{"native-code", "threads-and-processes", "torch-compute-in-forward"}));
}

}  // namespace
}  // namespace kforge::rules
