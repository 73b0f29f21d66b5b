#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "measure/round_size.hpp"

namespace kforge::measure {
namespace {

TEST(ChooseSamplesPerRound, FillsTheTargetRoundTime) {
  EXPECT_EQ(choose_samples_per_round(1.0), 50U);
  EXPECT_EQ(choose_samples_per_round(2.0), 25U);
  EXPECT_EQ(choose_samples_per_round(30.0), 2U);  // 1.67 rounds to 2
  EXPECT_EQ(choose_samples_per_round(1.0, 10.0), 10U);
}

TEST(ChooseSamplesPerRound, ClampsToOneAndOneHundred) {
  EXPECT_EQ(choose_samples_per_round(0.3), 100U);
  EXPECT_EQ(choose_samples_per_round(0.0), 100U);  // below timer resolution
  EXPECT_EQ(choose_samples_per_round(200.0), 1U);
  EXPECT_EQ(choose_samples_per_round(std::numeric_limits<double>::infinity()), 1U);
}

TEST(ChooseSamplesPerRound, RejectsNonsense) {
  EXPECT_THROW(choose_samples_per_round(std::nan("")), std::invalid_argument);
  EXPECT_THROW(choose_samples_per_round(-1.0), std::invalid_argument);
  EXPECT_THROW(choose_samples_per_round(1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(choose_samples_per_round(1.0, std::numeric_limits<double>::infinity()), std::invalid_argument);
}

}  // namespace
}  // namespace kforge::measure
