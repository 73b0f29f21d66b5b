#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_host_round_trip.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_host_round_trip_test {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(HostRoundTripRule(), source, profile);
}

std::string model_with(std::string_view forward_lines, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_lines) + "\n        return launch_copy(x)\n");
}

void expect_one_at(const std::string& source, std::string_view needle, Severity severity = Severity::reject) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "host-round-trip");
  EXPECT_EQ(findings[0].severity, severity);
  EXPECT_EQ(findings[0].location, location_of(source, needle)) << findings[0].message;
}

TEST(HostRoundTripRule, Metadata) {
  const HostRoundTripRule rule;
  EXPECT_EQ(rule.id(), "host-round-trip");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(HostRoundTripRule, TensorConversionsToTheHost) {
  expect_one_at(model_with("rows = x.tolist()"), "x.tolist()");
  expect_one_at(model_with("arr = x.detach().numpy()"), "x.detach().numpy()");
  expect_one_at(model_with("h = x.cpu()"), "x.cpu()");
  expect_one_at(model_with("h = x.to('cpu')"), "x.to('cpu')");
  expect_one_at(model_with("h = x.to(device=torch.device('cpu'))"), "x.to(device");
  expect_one_at(model_with("a = np.asarray(x)", "import numpy as np"), "np.asarray(x)");
}

TEST(HostRoundTripRule, AStoragesSizeIsMetadataButItsBytesAreNot) {
  EXPECT_TRUE(check(model_with("n = x.untyped_storage().size() // x.element_size()")).empty());
  EXPECT_TRUE(check(model_with("n = x.untyped_storage().nbytes()")).empty());
  expect_one_at(model_with("raw = x.untyped_storage().tolist()"), "x.untyped_storage()");
  expect_one_at(model_with("s = x.untyped_storage()"), "x.untyped_storage()");
  expect_one_at(model_with("raw = bytes(x.storage())"), "x.storage()");
}

TEST(HostRoundTripRule, ItemOnlyWarns) {
  expect_one_at(model_with("s = x.sum().item()"), "x.sum().item()", Severity::warn);
}

TEST(HostRoundTripRule, ReachableHelpersCount) {
  expect_one_at(with_prelude("\n\ndef host(x):\n    return x.tolist()\n\n\nclass ModelNew(nn.Module):\n"
                             "    def forward(self, x):\n        host(x)\n        return launch_copy(x)\n"),
                "x.tolist()");
}

TEST(HostRoundTripRule, HonestCodeIsQuiet) {
  EXPECT_TRUE(check(model_with("n = x.numel()\n        y = x.to(torch.float32).contiguous()")).empty());
  EXPECT_TRUE(check(model_with("y = x.to(x.device)")).empty());
  EXPECT_TRUE(check(model_with("k = np.prod([2, 3]).tolist()", "import numpy as np")).empty());
  // Outside forward's call graph (a test helper) nothing is reported.
  EXPECT_TRUE(
      check(with_prelude("\n\ndef reference(x):\n    return x.cpu().numpy()\n\n\nclass ModelNew(nn.Module):\n"
                         "    def forward(self, x):\n        return launch_copy(x)\n"))
          .empty());
}

}  // namespace rules_host_round_trip_test
}  // namespace kforge::rules
