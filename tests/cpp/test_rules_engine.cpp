#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rules/rule_engine.hpp"
#include "rules/rule_kernel_launched.hpp"
#include "source/module_index.hpp"
#include "source/python_parser.hpp"

namespace kforge::rules {
namespace {

// Reports one finding at a fixed location, with a severity that depends on the profile.
class FixedRule final : public Rule {
 public:
  FixedRule(std::string id, source::SourceLocation location) : id_(std::move(id)), location_(location) {}
  std::string_view id() const override { return id_; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override { return "reports a fixed finding"; }
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override {
    const Severity effective = context.profile == Profile::lenient ? Severity::warn : severity();
    findings.push_back({id_, effective, "found at " + source::to_string(location_), location_});
  }

 private:
  std::string id_;
  source::SourceLocation location_;
};

class ThrowingRule final : public Rule {
 public:
  std::string_view id() const override { return "throwing-rule"; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override { return "always fails"; }
  void check(const AnalysisContext& /*context*/, std::vector<Finding>& /*findings*/) const override {
    throw std::runtime_error("boom");
  }
};

class RuleEngineTest : public ::testing::Test {
 protected:
  AnalysisContext context(Profile profile = Profile::strict) const {
    return AnalysisContext{*module_, index_, source_, profile};
  }

 private:
  std::string source_ = "x = 1\n";
  std::unique_ptr<source::Module> module_ = source::parse_module(source_).module;
  source::ModuleIndex index_ = source::build_module_index(*module_);
};

TEST_F(RuleEngineTest, FindingsAreSortedByLocationThenRuleId) {
  RuleEngine engine;
  engine.add_rule(std::make_unique<FixedRule>("b-rule", source::SourceLocation{3, 1}));
  engine.add_rule(std::make_unique<FixedRule>("z-rule", source::SourceLocation{1, 5}));
  engine.add_rule(std::make_unique<FixedRule>("a-rule", source::SourceLocation{3, 1}));
  const std::vector<Finding> findings = engine.run(context());
  ASSERT_EQ(findings.size(), 3U);
  EXPECT_EQ(findings[0].rule_id, "z-rule");
  EXPECT_EQ(findings[1].rule_id, "a-rule");
  EXPECT_EQ(findings[2].rule_id, "b-rule");
  EXPECT_EQ(findings[0].message, "found at 1:5");
}

TEST_F(RuleEngineTest, ProfileReachesTheRules) {
  RuleEngine engine;
  engine.add_rule(std::make_unique<FixedRule>("rule", source::SourceLocation{1, 1}));
  EXPECT_EQ(engine.run(context(Profile::strict)).front().severity, Severity::reject);
  EXPECT_EQ(engine.run(context(Profile::lenient)).front().severity, Severity::warn);
}

TEST_F(RuleEngineTest, ThrowingRuleRejectsAndOthersStillRun) {
  RuleEngine engine;
  engine.add_rule(std::make_unique<ThrowingRule>());
  engine.add_rule(std::make_unique<FixedRule>("after", source::SourceLocation{2, 1}));
  const std::vector<Finding> findings = engine.run(context());
  ASSERT_EQ(findings.size(), 2U);
  EXPECT_EQ(findings[0].rule_id, "throwing-rule");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].message,
            "rule failed with an internal error, so the candidate could not be checked: boom");
  EXPECT_EQ(findings[1].rule_id, "after");
}

TEST_F(RuleEngineTest, NullRulesAreIgnored) {
  RuleEngine engine;
  engine.add_rule(nullptr);
  EXPECT_TRUE(engine.rules().empty());
  EXPECT_TRUE(engine.run(context()).empty());
}

TEST(RuleEngine, DefaultRules) {
  const RuleEngine engine = RuleEngine::with_default_rules();
  ASSERT_FALSE(engine.rules().empty());
  std::vector<std::string_view> ids;
  for (const auto& rule : engine.rules()) {
    ids.push_back(rule->id());
    EXPECT_FALSE(rule->summary().empty());
  }
  EXPECT_NE(std::find(ids.begin(), ids.end(), KernelLaunchedRule::kId), ids.end());
}

TEST(RuleEngine, EnumNames) {
  EXPECT_EQ(to_string(Severity::reject), "reject");
  EXPECT_EQ(to_string(Severity::warn), "warn");
  EXPECT_EQ(to_string(Profile::strict), "strict");
  EXPECT_EQ(to_string(Profile::lenient), "lenient");
  EXPECT_EQ(profile_from_string("lenient"), Profile::lenient);
  EXPECT_EQ(profile_from_string("strict"), Profile::strict);
  EXPECT_EQ(profile_from_string("Strict"), std::nullopt);
}

}  // namespace
}  // namespace kforge::rules
