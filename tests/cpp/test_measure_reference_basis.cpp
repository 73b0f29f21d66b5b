#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "measure/reference_basis.hpp"

namespace kforge::measure {
namespace {

TEST(ReferenceBasis, ASmallKernelComparesWithinTheCandidatesProcessDespiteItsOffset) {
  // 4 us in the judge, 4.4 us beside the candidate: a process's own offset, inside 0.5 us.
  const std::vector<double> judge{0.0040, 0.0040, 0.0041};
  const std::vector<double> beside{0.0044, 0.0044, 0.0045};
  const auto basis = choose_reference_basis(judge, beside);
  EXPECT_TRUE(basis.same_process);
  EXPECT_NEAR(basis.offset_ms, 0.0004, 1e-12);
  EXPECT_DOUBLE_EQ(basis.bound_ms, kProcessOffsetBoundMs);
  EXPECT_NE(basis.why.find("candidate's process"), std::string::npos) << basis.why;
}

TEST(ReferenceBasis, AReferenceSlowedInTheCandidatesProcessFallsBackToTheJudges) {
  const std::vector<double> judge{1.0, 1.0, 1.0};
  const std::vector<double> beside{1.03, 1.03, 1.03};  // 3% of 1 ms: more than 2% can explain
  const auto basis = choose_reference_basis(judge, beside);
  EXPECT_FALSE(basis.same_process);
  EXPECT_DOUBLE_EQ(basis.bound_ms, 0.02);
  EXPECT_NE(basis.why.find("the judge's reference is the basis"), std::string::npos) << basis.why;
}

TEST(ReferenceBasis, AFasterReferenceBesideTheCandidateIsKeptSinceItOnlyLowersTheSpeedup) {
  const std::vector<double> judge{2.0};
  const std::vector<double> beside{1.5};
  EXPECT_TRUE(choose_reference_basis(judge, beside).same_process);
}

TEST(ReferenceBasis, WithoutSamplesBesideTheCandidateTheJudgeIsTheBasis) {
  const auto basis = choose_reference_basis(std::vector<double>{1.0}, {});
  EXPECT_FALSE(basis.same_process);
  EXPECT_NE(basis.why.find("only in the judge"), std::string::npos);
  EXPECT_THROW((void)choose_reference_basis({}, std::vector<double>{1.0}), std::invalid_argument);
}

}  // namespace
}  // namespace kforge::measure
