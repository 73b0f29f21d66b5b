#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "profile/ncu_report.hpp"
#include "test_file_text.hpp"

namespace kforge::profile {
namespace {

using test_support::ncu_fixture;

// Captured on an H100 with `ncu --clock-control none --print-units base --csv --page raw` (bench/roofline).
TEST(NcuReport, ReadsEveryLaunchOfARealProfile) {
  const auto kernels = parse_ncu_raw_csv(ncu_fixture("gelu_tanh_raw.csv"));
  ASSERT_EQ(kernels.size(), 3U);
  const NcuKernel& first = kernels.front();
  EXPECT_EQ(first.name, "gelu_tanh_kernel");
  EXPECT_EQ(first.block_size, "(256, 1, 1)");
  EXPECT_EQ(first.grid_size, "(8192, 1, 1)");
  EXPECT_DOUBLE_EQ(first.metric("gpu__time_duration.sum").value(), 86880);
  EXPECT_DOUBLE_EQ(first.metric("dram__bytes_read.sum").value(), 134232320);  // printed "134,232,320"
  EXPECT_DOUBLE_EQ(first.metric("dram__bytes_write.avg").value(), 2825779.20);
  EXPECT_DOUBLE_EQ(first.metric("launch__waves_per_multiprocessor").value(), 7.76);
  EXPECT_FALSE(first.metric("no__such_metric.sum").has_value());
  EXPECT_FALSE(first.metric("launch__func_cache_config").has_value()) << "a word is not a number";
}

TEST(NcuReport, ConvertsScaledUnitsAndQuotedFields) {
  const std::string text =
      "program output, with a comma\n"
      "==PROF== Disconnected from process 1\n"
      "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid "
      "Size\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\"\r\n"
      "\"\",\"\",\"\",\"\",\"Kbyte\",\"usecond\"\r\n"
      "\"0\",\"k<\"\"a, b\"\">\",\"(128, 1, 1)\",\"(4, 2, 1)\",\"1,500.5\",\"2.5\"\r\n"
      "trailing program output\n";
  const auto kernels = parse_ncu_raw_csv(text);
  ASSERT_EQ(kernels.size(), 1U);
  EXPECT_EQ(kernels[0].name, "k<\"a, b\">");
  EXPECT_DOUBLE_EQ(kernels[0].metric("dram__bytes_read.sum").value(), 1500500);
  EXPECT_DOUBLE_EQ(kernels[0].metric("gpu__time_duration.sum").value(), 2500);
}

TEST(NcuReport, TextWithoutATableIsAClearError) {
  try {
    parse_ncu_raw_csv("==ERROR== The application returned an error code (1).\n");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("no Nsight Compute table"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(parse_ncu_raw_csv("\"ID\",\"Kernel Name\"\n\"\",\"\"\n").empty()) << "no kernel profiled";
}

}  // namespace
}  // namespace kforge::profile
