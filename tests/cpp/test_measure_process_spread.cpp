#include <gtest/gtest.h>

#include <cmath>

#include "measure/process_spread.hpp"
#include "measure/speedup_estimate.hpp"

namespace kforge::measure {
namespace {

TEST(ProcessSpread, ShrinksWithTheCallsLengthTowardsItsFloor) {
  EXPECT_NEAR(process_relative_sd(0.004), 0.0003 + 0.04 / 2.0, 1e-12);  // 4 µs: about 2%
  EXPECT_GT(process_relative_sd(0.004), process_relative_sd(0.030));
  EXPECT_GT(process_relative_sd(0.030), process_relative_sd(1.0));
  EXPECT_NEAR(process_relative_sd(1e6), kProcessSpreadFloor, 1e-5);
  EXPECT_TRUE(std::isfinite(process_relative_sd(0.0)));
}

TEST(ProcessSpread, ASelfComparisonOfASmallCallIsNoLongerCertainOfA2PercentOffset) {
  // 4 µs against 4.08 µs, a tight bootstrap interval that excludes 1.00 (the issue-31 failure class).
  const SpeedupEstimate within{0.980, 0.976, 0.984, 2000};
  const auto widened = with_process_spread(within, 0.004, 0.00408);
  EXPECT_DOUBLE_EQ(widened.speedup, 0.980);
  EXPECT_LT(widened.ci_low, 0.976);
  EXPECT_GT(widened.ci_high, 1.0);
  EXPECT_EQ(widened.bootstrap_resamples, 2000U);
}

TEST(ProcessSpread, ALongCallKeepsANarrowInterval) {
  // 10 ms: the process term is about 0.2% of the ratio, so a 1% speedup stays resolved.
  const SpeedupEstimate within{1.010, 1.009, 1.011, 2000};
  const auto widened = with_process_spread(within, 10.1, 10.0);
  EXPECT_GT(widened.ci_low, 1.0);
  EXPECT_LT(widened.ci_high, 1.013);
}

TEST(ProcessSpread, CombinesInQuadratureOnEachSideOfTheEstimate) {
  const SpeedupEstimate within{1.0, 1.0, 1.0, 1};  // no bootstrap width: the process term alone
  const auto widened = with_process_spread(within, 0.1, 0.1);
  const double half_width = 1.959964 * std::sqrt(2.0) * process_relative_sd(0.1);
  EXPECT_NEAR(std::log(widened.ci_high), half_width, 1e-9);
  EXPECT_NEAR(-std::log(widened.ci_low), half_width, 1e-9);
}

}  // namespace
}  // namespace kforge::measure
