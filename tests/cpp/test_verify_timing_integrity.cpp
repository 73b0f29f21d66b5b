#include <gtest/gtest.h>

#include "verify/timing_integrity.hpp"

namespace kforge::verify {
namespace {

RuntimeEvidence gpu_evidence(long launches_per_call, double kernel_us) {
  RuntimeEvidence evidence;
  evidence.on_gpu = true;
  evidence.traces = {{{"own_launches", {{"k", launches_per_call}}}, {"gpu_kernel_time_us", kernel_us}}};
  return evidence;
}

TEST(TimingIntegrity, HonestBatchesPass) {
  const std::vector<TimedBatch> batches{{5.0, {1.0, 1.0, 1.0}, 6, 3, {}}};
  EXPECT_TRUE(timing_integrity_findings(batches, gpu_evidence(2, 900.0), 1.0).empty());
}

TEST(TimingIntegrity, MoreReportedTimeThanWallTimeIsTampering) {
  const std::vector<TimedBatch> batches{{2.0, {1.0, 1.0, 1.0}, 3, 3, {}}};
  const auto findings = timing_integrity_findings(batches, gpu_evidence(1, 900.0), 1.0);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().rule_id, "timer-tampering");
}

TEST(TimingIntegrity, FewerLaunchesWhileTimedMeansSkippedWork) {
  const std::vector<TimedBatch> batches{{50.0, {0.1, 0.1, 0.1, 0.1}, 1, 4, {}}};
  const auto findings = timing_integrity_findings(batches, gpu_evidence(1, 90.0), 0.1);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().rule_id, "timing-kernels-skipped");
}

TEST(TimingIntegrity, ProfiledKernelTimeFarAboveTheEventsMeansHiddenWork) {
  const std::vector<TimedBatch> batches{{50.0, {0.1, 0.1}, 2, 2, {}}};
  const auto findings = timing_integrity_findings(batches, gpu_evidence(1, 400.0), 0.1);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings.front().rule_id, "hidden-gpu-work");
  // Within the allowed ratio and slack: warm-cache profiling, clock jitter.
  EXPECT_TRUE(timing_integrity_findings(batches, gpu_evidence(1, 160.0), 0.1).empty());
}

TEST(TimingIntegrity, UnreportedLaunchCountsAreNotHeldAgainstTheCandidate) {
  const std::vector<TimedBatch> batches{{50.0, {0.1}, -1, 1, {}}};
  EXPECT_TRUE(timing_integrity_findings(batches, gpu_evidence(1, 90.0), 0.1).empty());
}

TEST(TimingIntegrity, ReplacedTimingFunctionsAreTampering) {
  const std::vector<TimedBatch> batches{{50.0, {0.1, 0.1}, 2, 2, {"Event.elapsed_time"}}};
  const auto findings = timing_integrity_findings(batches, RuntimeEvidence{}, 0.1);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].rule_id, "timer-tampering");
  EXPECT_NE(findings[0].message.find("Event.elapsed_time"), std::string::npos);
}

}  // namespace
}  // namespace kforge::verify
