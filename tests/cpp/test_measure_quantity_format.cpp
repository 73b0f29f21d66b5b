#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "measure/quantity_format.hpp"

namespace kforge::measure {
namespace {

TEST(FormatSignificant, ThreeSignificantDigitsTrimmed) {
  EXPECT_EQ(format_significant(10.0), "10");
  EXPECT_EQ(format_significant(2.5), "2.5");
  EXPECT_EQ(format_significant(0.81234), "0.812");
  EXPECT_EQ(format_significant(999.4), "999");
  EXPECT_EQ(format_significant(0.0), "0");
}

TEST(FormatSignificant, WholeNumbersFromOneThousand) {
  EXPECT_EQ(format_significant(1234.4), "1234");
  EXPECT_EQ(format_significant(-3600.0), "-3600");
}

TEST(FormatSignificant, NonFinite) {
  EXPECT_EQ(format_significant(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_significant(std::nan("")), "nan");
}

TEST(FormatPercent, ScalesFractions) {
  EXPECT_EQ(format_percent(0.008), "0.8%");
  EXPECT_EQ(format_percent(0.01), "1%");
  EXPECT_EQ(format_percent(0.023), "2.3%");
  EXPECT_EQ(format_percent(0.0), "0%");
}

}  // namespace
}  // namespace kforge::measure
