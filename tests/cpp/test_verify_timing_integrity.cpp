#include <gtest/gtest.h>

#include "verify/timed_values.hpp"
#include "verify/timing_integrity.hpp"

namespace kforge::verify {
namespace {

RuntimeEvidence gpu_evidence(long launches_per_call, double kernel_us) {
  RuntimeEvidence evidence;
  evidence.on_gpu = true;
  evidence.traces = {{{"own_launches", {{"k", launches_per_call}}}, {"gpu_kernel_time_us", kernel_us}}};
  return evidence;
}

TimedBatch batch(double wall_ms, std::vector<double> samples, long launches, long calls) {
  TimedBatch timed;
  timed.wall_ms = wall_ms;
  timed.samples_ms = std::move(samples);
  timed.own_launches = launches;
  timed.calls = calls;
  return timed;
}

TEST(TimingIntegrity, HonestBatchesPass) {
  const std::vector<TimedBatch> batches{batch(5.0, {1.0, 1.0, 1.0}, 6, 3)};
  EXPECT_TRUE(timing_integrity_findings(batches, gpu_evidence(2, 900.0), 1.0).empty());
}

TEST(TimingIntegrity, MoreReportedTimeThanWallTimeIsTampering) {
  const std::vector<TimedBatch> batches{batch(2.0, {1.0, 1.0, 1.0}, 3, 3)};
  const auto findings = timing_integrity_findings(batches, gpu_evidence(1, 900.0), 1.0);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().rule_id, "timer-tampering");
}

TEST(TimingIntegrity, FewerLaunchesWhileTimedMeansSkippedWork) {
  const std::vector<TimedBatch> batches{batch(50.0, {0.1, 0.1, 0.1, 0.1}, 1, 4)};
  const auto findings = timing_integrity_findings(batches, gpu_evidence(1, 90.0), 0.1);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().rule_id, "timing-kernels-skipped");
}

TEST(TimingIntegrity, ProfiledKernelTimeFarAboveTheEventsMeansHiddenWork) {
  const std::vector<TimedBatch> batches{batch(50.0, {0.1, 0.1}, 2, 2)};
  const auto findings = timing_integrity_findings(batches, gpu_evidence(1, 400.0), 0.1);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings.front().rule_id, "hidden-gpu-work");
  // Within the allowed ratio and slack: warm-cache profiling, clock jitter.
  EXPECT_TRUE(timing_integrity_findings(batches, gpu_evidence(1, 160.0), 0.1).empty());
}

TEST(TimingIntegrity, UnreportedLaunchCountsAreNotHeldAgainstTheCandidate) {
  const std::vector<TimedBatch> batches{batch(50.0, {0.1}, -1, 1)};
  EXPECT_TRUE(timing_integrity_findings(batches, gpu_evidence(1, 90.0), 0.1).empty());
}

TEST(TimingIntegrity, ReplacedTimingFunctionsAreTampering) {
  auto timed = batch(50.0, {0.1, 0.1}, 2, 2);
  timed.replaced_timing_functions = {"Event.elapsed_time"};
  const std::vector<TimedBatch> batches{timed};
  const auto findings = timing_integrity_findings(batches, RuntimeEvidence{}, 0.1);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].rule_id, "timer-tampering");
  EXPECT_NE(findings[0].message.find("Event.elapsed_time"), std::string::npos);
}

TEST(TimingIntegrity, SideStreamLaunchesWhileTimedAreReported) {
  auto timed = batch(50.0, {0.1, 0.1}, 2, 2);
  timed.side_stream_launches = 2;
  const auto findings = timing_integrity_findings({timed}, gpu_evidence(1, 90.0), 0.1);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].rule_id, "side-stream-launch");
}

TEST(TimingIntegrity, StateLeftOnInputsByTimedCallsRejects) {
  auto timed = batch(50.0, {0.1, 0.1}, 2, 2);
  timed.input_attributes = {"input 0 has attribute(s) 'calls'"};
  const auto findings = timing_integrity_findings({timed}, gpu_evidence(1, 90.0), 0.1);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].rule_id, "input-attributes");
  EXPECT_NE(findings[0].message.find("'calls'"), std::string::npos);
}

// Back-to-back calls take about max(host enqueue, device time); far more means the GPU was busy with
// work the events did not cover (a side stream running during the sleep before each sample).
TEST(TimingIntegrity, WallTimePerCallFarAboveHostAndEventTimeIsHiddenWork) {
  auto timed = batch(50.0, {0.005, 0.005}, 2, 2);
  timed.host_ms_per_call = 0.03;  // a launch-bound call: the host takes 30 µs, the device 5 µs
  timed.wall_ms_per_call = 0.035;
  EXPECT_TRUE(timing_integrity_findings({timed}, gpu_evidence(1, 5.0), 0.005).empty());
  timed.wall_ms_per_call = 0.5;  // half a millisecond of GPU work somewhere else per call
  const auto findings = timing_integrity_findings({timed}, gpu_evidence(1, 5.0), 0.005);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].rule_id, "hidden-gpu-work");
}

// Other processes' kernels (a batch's stopped programs, its other evaluations) lengthen both sides'
// back-to-back calls in the same rounds: the reference's calls are the control.
TEST(TimingIntegrity, OutsideWorkThatSlowsTheReferenceAlikeIsNotHeldAgainstTheCandidate) {
  auto timed = batch(50.0, {0.05, 0.05}, 2, 2);
  timed.host_ms_per_call = 0.3;
  timed.wall_ms_per_call = 2.4;  // as context_attn_nopad in a 16-job TritonBench run on one GPU
  const auto evidence = gpu_evidence(1, 50.0);
  EXPECT_EQ(timing_integrity_findings({timed}, evidence, 0.05).size(), 1U) << "no control: hidden work";
  const WallControl contended{2.2, 0.3, 0.05};  // the reference waited as long on the same work
  EXPECT_TRUE(timing_integrity_findings({timed}, evidence, 0.05, contended).empty());
  const WallControl clean{0.31, 0.3, 0.05};  // the reference's calls ran clean: the excess is the candidate's
  EXPECT_EQ(timing_integrity_findings({timed}, evidence, 0.05, clean).size(), 1U);
  const WallControl slightly{0.9, 0.3, 0.05};  // some outside work, but far less than the candidate's
  const auto findings = timing_integrity_findings({timed}, evidence, 0.05, slightly);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_NE(findings[0].message.find("the reference's calls in the same rounds"), std::string::npos);
}

// Outside work that overlaps some timing rounds only: one clean round shows the candidate adds nothing
// (context_attn_nopad, 16 jobs on one H200: 0.545 ms back to back against 0.056 ms of events). Hidden
// work lengthens every round.
TEST(TimingIntegrity, OneCleanRoundClearsTheCandidateOfOutsideWork) {
  auto contended = batch(50.0, {0.056, 0.056}, 2, 2);
  contended.host_ms_per_call = 0.03;
  contended.wall_ms_per_call = 0.545;
  auto clean = contended;
  clean.wall_ms_per_call = 0.06;
  const auto evidence = gpu_evidence(1, 56.0);
  EXPECT_EQ(timing_integrity_findings({contended, contended}, evidence, 0.056).size(), 1U);
  EXPECT_TRUE(timing_integrity_findings({contended, clean, contended}, evidence, 0.056).empty());
  auto hidden = clean;
  hidden.wall_ms_per_call = 0.4;  // every round waits on work the events did not see
  const auto findings = timing_integrity_findings({contended, hidden, hidden}, evidence, 0.056);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].rule_id, "hidden-gpu-work");
  EXPECT_NE(findings[0].message.find("0.4 ms each"), std::string::npos) << findings[0].message;
  auto spinning = hidden;  // one round's calls spin on the host: its bound must not rise with them
  spinning.host_ms_per_call = 0.3;
  EXPECT_EQ(timing_integrity_findings({hidden, spinning, hidden}, evidence, 0.056).size(), 1U);
}

TEST(TimingIntegrity, DeviceBoundCallsPassTheWallCheck) {
  auto timed = batch(500.0, {1.0, 1.0}, 2, 2);
  timed.host_ms_per_call = 0.02;
  timed.wall_ms_per_call = 0.97;  // warm L2 back to back: a little faster than the cold samples
  EXPECT_TRUE(timing_integrity_findings({timed}, gpu_evidence(1, 950.0), 1.0).empty());
  timed.wall_ms_per_call = -1.0;  // not measured: nothing to hold against the candidate
  EXPECT_TRUE(timing_integrity_findings({timed}, gpu_evidence(1, 950.0), 1.0).empty());
}

TEST(TimedValues, SetsFitTheByteBudgetButAreNeverFewerThanTwo) {
  EXPECT_EQ(timing_value_sets(0), kMaxTimingValueSets);
  EXPECT_EQ(timing_value_sets(std::uint64_t{1} << 20), kMaxTimingValueSets);
  EXPECT_EQ(timing_value_sets(kTimingValueSetBytes / 3), 3U);
  EXPECT_EQ(timing_value_sets(kTimingValueSetBytes), 2U);
  EXPECT_EQ(timing_value_sets(std::uint64_t{40} << 30), 2U);
  // A set counts its outputs: 100 MB of inputs alone would give four sets, with a 4 GiB output two.
  constexpr std::uint64_t kInputs = 100'000'000;
  EXPECT_EQ(timing_value_sets(kInputs), kMaxTimingValueSets);
  EXPECT_EQ(timing_value_sets(kInputs + (std::uint64_t{4} << 30)), 2U);
}

TEST(TimedValues, OrderNeverRepeatsASetTwiceInARowAndUsesEverySet) {
  std::mt19937_64 random(12345);
  const auto order = value_set_order(400, 4, random, 2);
  ASSERT_EQ(order.size(), 400U);
  EXPECT_NE(order.front(), 2);
  std::vector<int> counts(4, 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    ASSERT_GE(order[i], 0);
    ASSERT_LT(order[i], 4);
    ++counts[static_cast<std::size_t>(order[i])];
    if (i > 0) {
      EXPECT_NE(order[i], order[i - 1]) << "at " << i;
    }
  }
  for (const int count : counts) {
    EXPECT_GT(count, 60);  // about 100 each
  }
}

TEST(TimedValues, OneSetGivesAnOrderOfZeros) {
  std::mt19937_64 random(1);
  EXPECT_EQ(value_set_order(3, 1, random, -1), (std::vector<int>{0, 0, 0}));
  EXPECT_TRUE(value_set_order(0, 4, random, -1).empty());
}

}  // namespace
}  // namespace kforge::verify
