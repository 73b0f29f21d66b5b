#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_side_stream.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_side_stream_test {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(SideStreamRule(), source, profile);
}

std::string model_with(std::string_view forward_lines, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " +
                      std::string(forward_lines) + "\n        return launch_copy(x)\n");
}

void expect_one_at(const std::string& source, std::string_view needle, int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "side-stream");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(SideStreamRule, Metadata) {
  const SideStreamRule rule;
  EXPECT_EQ(rule.id(), "side-stream");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(SideStreamRule, StreamsAndStreamContexts) {
  const std::string source = model_with("with torch.cuda.stream(self.side):\n            launch_copy(x)");
  expect_one_at(source, "torch.cuda.stream");
  EXPECT_TRUE(testing::mentions(check(source)[0], "side stream"));
  expect_one_at(model_with("pass", "\nSIDE = torch.cuda.Stream()\n"), "torch.cuda.Stream");
  expect_one_at("from torch.cuda import Stream as S\n" + model_with("s = S()"), "S()");
  expect_one_at(model_with("torch.cuda.set_stream(self.side)"), "torch.cuda.set_stream");
}

TEST(SideStreamRule, CudaGraphs) {
  expect_one_at(model_with("g = torch.cuda.CUDAGraph()"), "torch.cuda.CUDAGraph");
  expect_one_at(
      "import torch.cuda as tc\n" + model_with("with tc.graph(self.g):\n            launch_copy(x)"),
      "tc.graph");
  expect_one_at(model_with("f = torch.cuda.make_graphed_callables(launch_copy, (x,))"),
                "torch.cuda.make_graphed_callables");
}

TEST(SideStreamRule, WaitsBetweenStreams) {
  expect_one_at(model_with("torch.cuda.current_stream().wait_stream(self.side)"),
                "torch.cuda.current_stream");
  expect_one_at(model_with("self.side.wait_event(self.done)"), "self.side.wait_event");
  expect_one_at(model_with("done = torch.cuda.Event()\n        done.wait()"), "done.wait");
}

TEST(SideStreamRule, StreamKeywordOnLaunchesAndTorchCalls) {
  expect_one_at(model_with("copy_kernel[(1,)](x, x, 1, BLOCK=16, stream=self.side)"), "stream=self");
  expect_one_at(model_with("y = torch.empty_like(x); y.record_stream(self.side)"), "y.record_stream");
}

TEST(SideStreamRule, SwitchingToTheCurrentStreamChangesNothing) {
  const std::vector<std::string> honest = {
      model_with("with torch.cuda.stream(torch.cuda.current_stream(x.device)):\n            launch_copy(x)"),
      model_with(
          "s = torch.cuda.current_stream()\n        with torch.cuda.stream(s):\n            launch_copy(x)"),
      model_with("with torch.cuda.stream(None):\n            launch_copy(x)"),
      model_with("s = torch.cuda.current_stream(x.device) if x.is_cuda else None\n"
                 "        with torch.cuda.stream(s):\n            launch_copy(x)"),
      with_prelude(R"PY(

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.stream = torch.cuda.current_stream()

    def forward(self, x):
        with torch.cuda.stream(self.stream):
            return launch_copy(x)
)PY")};
  for (const auto& source : honest) {
    const std::vector<Finding> findings = check(source);
    EXPECT_TRUE(findings.empty()) << source << findings.front().message;
  }
  // Any other stream, or one that is the current stream only on some paths, is still a side stream.
  expect_one_at(
      model_with("s = torch.cuda.current_stream()\n        if x.numel() > 4:\n            s = self.side\n"
                 "        with torch.cuda.stream(s):\n            launch_copy(x)"),
      "torch.cuda.stream(s)");
  expect_one_at(
      model_with("with torch.cuda.stream(torch.cuda.default_stream()):\n            launch_copy(x)"),
      "torch.cuda.stream");
}

TEST(SideStreamRule, LenientProfileWarns) {
  const std::vector<Finding> findings = check(model_with("s = torch.cuda.Stream()"), Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(SideStreamRule, SynchronizeAndEventsForNothingElseAreFine) {
  const std::string source = with_prelude(R"PY(

def run(fn, stream=None):
    return fn()


class ModelNew(nn.Module):
    """Never uses torch.cuda.Stream(); this docstring only names it."""

    def forward(self, x):
        # with torch.cuda.stream(s): would be forbidden
        out = launch_copy(x)
        torch.cuda.synchronize()
        out2 = run(lambda: out, stream=None)
        current = torch.cuda.current_stream()
        current.synchronize()
        return out
)PY");
  const std::vector<Finding> findings = check(source);
  EXPECT_TRUE(findings.empty()) << findings.front().message;
}

}  // namespace rules_side_stream_test
}  // namespace kforge::rules
