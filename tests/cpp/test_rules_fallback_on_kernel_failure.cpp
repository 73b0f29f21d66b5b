#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_fallback_on_kernel_failure.hpp"
#include "test_rules_support.hpp"

namespace kforge::rules {
namespace rules_fallback_on_kernel_failure_test {

using testing::location_of;
using testing::with_prelude;

std::vector<Finding> check(std::string_view source, Profile profile = Profile::strict) {
  return testing::run_rule(FallbackOnKernelFailureRule(), source, profile);
}

// ModelNew.forward with `body` (already indented by 8 spaces).
std::string forward_body(std::string_view body, std::string_view module_lines = "") {
  return with_prelude(std::string(module_lines) +
                      "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n" + std::string(body));
}

void expect_one_at(const std::string& source, std::string_view needle, int occurrence = 0) {
  const std::vector<Finding> findings = check(source);
  ASSERT_EQ(findings.size(), 1U) << source;
  EXPECT_EQ(findings[0].rule_id, "fallback-on-kernel-failure");
  EXPECT_EQ(findings[0].severity, Severity::reject);
  EXPECT_EQ(findings[0].location, location_of(source, needle, occurrence)) << findings[0].message;
}

TEST(FallbackOnKernelFailureRule, Metadata) {
  const FallbackOnKernelFailureRule rule;
  EXPECT_EQ(rule.id(), "fallback-on-kernel-failure");
  EXPECT_EQ(rule.severity_for(Profile::strict), Severity::reject);
  EXPECT_EQ(rule.severity_for(Profile::lenient), Severity::warn);
}

TEST(FallbackOnKernelFailureRule, DirectLaunchWithSilentHandler) {
  const std::string source = forward_body(R"PY(        out = torch.empty_like(x)
        try:
            copy_kernel[(1,)](x, out, x.numel(), BLOCK=1024)
        except Exception:
            out = torch.relu(x)
        return out
)PY");
  expect_one_at(source, "except Exception");
  EXPECT_TRUE(testing::mentions(check(source)[0], "in `ModelNew.forward`"));
}

TEST(FallbackOnKernelFailureRule, LaunchThroughAHelperFunction) {
  expect_one_at(forward_body(R"PY(        try:
            return launch_copy(x)
        except:
            return x.clone()
)PY"),
                "except:");
}

TEST(FallbackOnKernelFailureRule, LaunchThroughTwoLevelsOfHelpers) {
  const std::string source = forward_body(R"PY(        try:
            return self._run(x)
        except (RuntimeError, ValueError) as error:
            print(error)
        return x
)PY") + R"PY(
    def _run(self, x):
        return outer(x)


def outer(x):
    return launch_copy(x)
)PY";
  expect_one_at(source, "except (RuntimeError");
}

TEST(FallbackOnKernelFailureRule, HandlerThatReturnsBeforeRaising) {
  expect_one_at(forward_body(R"PY(        try:
            return launch_copy(x)
        except RuntimeError:
            if x.numel() == 0:
                return x
            raise
)PY"),
                "except RuntimeError");
}

TEST(FallbackOnKernelFailureRule, OnlyTheSwallowingHandlerIsReported) {
  const std::string source = forward_body(R"PY(        try:
            return launch_copy(x)
        except ValueError:
            raise
        except RuntimeError:
            return x
)PY");
  expect_one_at(source, "except RuntimeError");
}

TEST(FallbackOnKernelFailureRule, ContextlibSuppress) {
  expect_one_at(forward_body(R"PY(        out = x
        with suppress(Exception):
            out = launch_copy(x)
        return out
)PY",
                             "\nfrom contextlib import suppress\n"),
                "with suppress");
}

TEST(FallbackOnKernelFailureRule, LenientProfileWarns) {
  const std::vector<Finding> findings = check(forward_body(R"PY(        try:
            return launch_copy(x)
        except Exception:
            return x
)PY"),
                                              Profile::lenient);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].severity, Severity::warn);
}

TEST(FallbackOnKernelFailureRule, ReRaisingHandlersAreHonest) {
  const std::string source = forward_body(R"PY(        try:
            out = launch_copy(x)
        except RuntimeError as error:
            raise RuntimeError("copy kernel failed for shape " + str(tuple(x.shape))) from error
        except ValueError:
            print("bad input")
            raise
        except TypeError as error:
            if x.is_cuda:
                raise error
            else:
                raise TypeError("cpu") from None
        finally:
            pass
        return out
)PY");
  EXPECT_TRUE(check(source).empty());
}

TEST(FallbackOnKernelFailureRule, AHandlerThatRelaunchesTheKernelIsARetryNotAFallback) {
  // TritonBench-G's attention_fwd_triton3: smaller blocks after triton.OutOfResources, same kernel.
  const std::string source = forward_body(R"PY(        try:
            out = launch_copy(x)
        except triton.OutOfResources:
            out = launch_copy(x.contiguous())
        return out
)PY");
  EXPECT_TRUE(check(source).empty());
}

TEST(FallbackOnKernelFailureRule, TryWithoutALaunchOrWithoutHandlersIsFine) {
  const std::string source = forward_body(R"PY(        try:
            block = int(self.block)
        except (AttributeError, ValueError):
            block = 1024
        try:
            out = launch_copy(x)
        finally:
            block = 0
        return out
)PY");
  EXPECT_TRUE(check(source).empty());
}

TEST(FallbackOnKernelFailureRule, CodeOutsideForwardIsIgnored) {
  const std::string source = forward_body("        return launch_copy(x)\n", R"PY(

def warm_up(x):
    try:
        launch_copy(x)
    except Exception:
        pass
)PY");
  EXPECT_TRUE(check(source).empty());
}

}  // namespace rules_fallback_on_kernel_failure_test
}  // namespace kforge::rules
