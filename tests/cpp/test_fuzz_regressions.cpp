#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rules/static_analysis.hpp"
#include "source/module_index.hpp"
#include "source/python_parser.hpp"

// Inputs that made static analysis hang or blow up while it was being fuzzed (docs/fuzzing.md).
// Each used to take from minutes to practically forever; the ctest TIMEOUT of this suite catches
// a regression, the expectations check that the fix kept the answers.
namespace kforge::source {
namespace {

using Names = std::vector<std::string>;

struct Indexed {
  std::unique_ptr<Module> module;
  ModuleIndex index;
};

Indexed index_of(std::string_view source) {
  ParseResult parsed = parse_module(source);
  EXPECT_TRUE(parsed.ok()) << parsed.error->message << " at " << parsed.error->location;
  Indexed indexed;
  indexed.module = std::move(parsed.module);
  if (indexed.module) {
    indexed.index = build_module_index(*indexed.module);
  }
  return indexed;
}

std::string repeated(std::string_view pattern, int count) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    std::string line(pattern);
    for (std::size_t at = line.find('#'); at != std::string::npos; at = line.find('#')) {
      line.replace(at, 1, std::to_string(i));
    }
    text += line;
  }
  return text;
}

constexpr std::string_view kKernel = "import triton\n@triton.jit\ndef k(x):\n    pass\n";

// `self.x = self.x` repeated: every reference re-resolved every value of the attribute (cubic).
TEST(FuzzRegressions, SelfAttributeAssignedFromItselfThousandsOfTimes) {
  const std::string source = std::string(kKernel) + "class ModelNew:\n    def forward(self, x):\n" +
                             repeated("        self.x = self.x\n", 2000) + "        k[(1,)](x)\n";
  EXPECT_EQ(index_of(source).index.launched_kernels(), (Names{"k"}));
}

// One name aliased thousands of times and launched from thousands of sites: one search per site.
TEST(FuzzRegressions, HeavilyAliasedKernelLaunchedFromThousandsOfSites) {
  const std::string source = std::string(kKernel) + "class ModelNew:\n    def forward(self, x):\n" +
                             repeated("        f = k\n", 2000) + repeated("        f[(1,)](x)\n", 2000);
  const Indexed indexed = index_of(source);
  EXPECT_EQ(indexed.index.launched_kernels(), (Names{"k"}));
  EXPECT_EQ(indexed.index.launches.size(), 2000U);
}

// Bases listed many times on a deep hierarchy: the recursive method search was exponential.
TEST(FuzzRegressions, DeepHierarchyWithRepeatedBases) {
  std::string source = "class C0:\n    def forward(self, x):\n        return x\n";
  for (int level = 1; level <= 30; ++level) {
    std::string bases;
    for (int copy = 0; copy < 8; ++copy) {
      bases += (copy == 0 ? "" : ", ") + std::string("C") + std::to_string(level - 1);
    }
    source += "class C" + std::to_string(level) + "(" + bases + "):\n    pass\n";
  }
  source += "class ModelNew(C10):\n    pass\n";
  const Indexed indexed = index_of(source);
  ASSERT_TRUE(indexed.index.model.has_value());
  EXPECT_TRUE(indexed.index.model->has_forward);
  EXPECT_EQ(indexed.index.reachable_functions, (Names{"C0.forward"}));
}

// `self.a.m0()`, `self.a.m1()`...: each member walked every value held by `a` again.
TEST(FuzzRegressions, ManyMembersOfAnAttributeHoldingManyInstances) {
  std::string source =
      "class A:\n    def m7(self):\n        pass\nclass ModelNew:\n    def __init__(self):\n";
  source += "        self.a = [" + repeated("A(), ", 3000) + "]\n    def forward(self, x):\n";
  source += repeated("        self.a.m#()\n", 1000);
  EXPECT_EQ(index_of(source).index.reachable_functions, (Names{"ModelNew.forward", "A.m7"}));
}

// A site picking from a tuple of hundreds of kernels, at hundreds of sites: each site records at
// most 64 of them instead of every one (millions of launches in all).
TEST(FuzzRegressions, LaunchSitesPickingFromHundredsOfKernels) {
  std::string source = "import triton\n" + repeated("@triton.jit\ndef k#(x):\n    pass\n", 300);
  source += "K = (" + repeated("k#, ", 300) + ")\nclass ModelNew:\n    def forward(self, x):\n";
  source += repeated("        K[0][(1,)](x)\n", 300);
  const Indexed indexed = index_of(source);
  EXPECT_EQ(indexed.index.launches.size(), 300U * 64U);
  EXPECT_EQ(indexed.index.launched_kernels().size(), 64U);
  EXPECT_EQ(indexed.index.unlaunched_kernels().size(), 300U - 64U);
}

// Alias chains resolve iteratively, whatever their length (the recursive search stopped at 64).
TEST(FuzzRegressions, AliasChainOfThousandsOfNames) {
  std::string source = std::string(kKernel) + "a0 = k\n";
  for (int i = 1; i < 3000; ++i) {
    source += "a" + std::to_string(i) + " = a" + std::to_string(i - 1) + "\n";
  }
  source += "class ModelNew:\n    def forward(self, x):\n        a2999[(1,)](x)\n";
  EXPECT_EQ(index_of(source).index.launched_kernels(), (Names{"k"}));
}

// Thousands of instantiated classes times thousands of members: polynomial, but billions of steps.
// Indexing gives up at kMaxIndexWork and static analysis rejects the candidate.
std::string too_complex_module() {
  std::string source = repeated("class A#:\n    pass\n", 1000);
  source += "class ModelNew:\n    def __init__(self):\n        self.x = [" + repeated("A#(), ", 1000) + "]\n";
  source += "    def forward(self, x):\n" + repeated("        self.x.m#()\n", 2500);
  return source;
}

TEST(FuzzRegressions, IndexingGivesUpPastTheWorkBound) {
  const std::string source = too_complex_module();
  const ParseResult parsed = parse_module(source);
  ASSERT_TRUE(parsed.ok());
  EXPECT_THROW(static_cast<void>(build_module_index(*parsed.module)), IndexTooComplex);
}

TEST(FuzzRegressions, TooComplexModuleIsRejected) {
  const rules::StaticReport report = rules::analyse_candidate(too_complex_module());
  EXPECT_TRUE(report.rejected());
  ASSERT_FALSE(report.findings.empty());
  EXPECT_EQ(report.findings.front().rule_id, "static-analysis-failed");
  EXPECT_NE(report.findings.front().message.find("module too complex to index"), std::string::npos);
}

// Rule-engine inputs (name resolution, after indexing succeeded): each value-set query walked
// every value again per site, quadratic in sites times values. Names and attributes with
// over 1024 values are rejected as too complex (no honest module has them); a hierarchy resolves
// once, not once per reference.
constexpr std::string_view kRuleHeader = "import torch\nimport triton\n@triton.jit\ndef k(x):\n    pass\n";

TEST(FuzzRegressions, NameReboundThousandsOfTimesAndCalledThroughSubscripts) {
  const std::string source =
      std::string(kRuleHeader) + "class ModelNew(torch.nn.Module):\n    def forward(self, x):\n" +
      repeated("        x = k\n", 3000) + repeated("        x[1]()\n", 3000) + "        return x\n";
  const rules::StaticReport report = rules::analyse_candidate(source);
  EXPECT_TRUE(report.rejected());
}

TEST(FuzzRegressions, RuleQueriesOnADeepHierarchyWithRepeatedBases) {
  std::string source = std::string(kRuleHeader) + "class C0:\n    def m(self):\n        pass\n";
  for (int level = 1; level < 60; ++level) {
    std::string bases;
    for (int copy = 0; copy < 20; ++copy) {
      bases += (copy == 0 ? "" : ", ") + std::string("C") + std::to_string(level - 1);
    }
    source += "class C" + std::to_string(level) + "(" + bases + "):\n    pass\n";
  }
  source += "class ModelNew(C59, torch.nn.Module):\n    def forward(self, x):\n" +
            repeated("        self.m()\n", 2000) + "        return x\n";
  const rules::StaticReport report = rules::analyse_candidate(source);
  for (const auto& finding : report.findings) {
    EXPECT_NE(finding.rule_id, "static-analysis-failed") << finding.message;
  }
}

TEST(FuzzRegressions, RuleQueriesOnAnAttributeAssignedThousandsOfTimes) {
  const std::string source = std::string(kRuleHeader) + "class A:\n    def m0(self):\n        pass\n" +
                             "class ModelNew(torch.nn.Module):\n    def __init__(self):\n" +
                             repeated("        self.x = A()\n", 2000) + "    def forward(self, x):\n" +
                             repeated("        self.x.m#()\n", 2000) + "        return x\n";
  const rules::StaticReport report = rules::analyse_candidate(source);
  ASSERT_TRUE(report.rejected());
  EXPECT_EQ(report.findings.front().rule_id, "static-analysis-failed");
  EXPECT_NE(report.findings.front().message.find("more than 1024 different values"), std::string::npos);
}

}  // namespace
}  // namespace kforge::source
