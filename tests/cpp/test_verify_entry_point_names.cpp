#include <gtest/gtest.h>

#include <string>

#include "verify/entry_point_names.hpp"

namespace kforge::verify {
namespace {

TEST(EntryPointNames, MessagesNameTheUsersWrapperInsteadOfTheGeneratedAdapter) {
  auto verdict = Verdict::with_all_stages_pending();
  auto& stage = verdict.stage(StageName::static_analysis);
  stage.summary =
      "Triton kernel `k` is defined but not launched from ModelNew.forward: expected a launch "
      "such as `kernel[grid](...)` in forward or in a function it calls (line 9)";
  stage.findings.push_back({"torch-compute-in-forward",
                            rules::Severity::reject,
                            "`torch.relu` is PyTorch compute on the path from ModelNew.forward",
                            {19, 12}});
  verdict.stage(StageName::compile).summary = "ModelNew built (1.0 s)";
  verdict.error = EvaluationError{"problem", "ModelNew.forward cannot take the problem's 3 input(s)"};
  name_entry_point(verdict, "scaled_add_relu");
  EXPECT_EQ(stage.summary,
            "Triton kernel `k` is defined but not launched from scaled_add_relu: expected a launch such as "
            "`kernel[grid](...)` in scaled_add_relu or in a function it calls (line 9)");
  EXPECT_EQ(stage.findings[0].message, "`torch.relu` is PyTorch compute on the path from scaled_add_relu");
  EXPECT_EQ(verdict.stage(StageName::compile).summary, "the adapter calling scaled_add_relu built (1.0 s)");
  EXPECT_EQ(verdict.error->message, "scaled_add_relu cannot take the problem's 3 input(s)");
}

}  // namespace
}  // namespace kforge::verify
