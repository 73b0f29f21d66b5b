#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "profile/roofline.hpp"
#include "test_file_text.hpp"

namespace kforge::profile {
namespace profile_roofline_test {

using test_support::ncu_fixture;

RooflineCeilings h100() {
  return ceilings_from_json(nlohmann::json::parse(ncu_fixture("h100_ceilings.json")));
}

TEST(Roofline, ReadsTheMeasuredCeilings) {
  const auto ceilings = h100();
  EXPECT_EQ(ceilings.device, "NVIDIA H100 80GB HBM3");
  EXPECT_NEAR(ceilings.dram_bytes_per_s, 3.0e12, 0.01e12);
  EXPECT_NEAR(ceilings.flop_per_s(MathPath::tensor_bf16), 789e12, 1e12);
  EXPECT_NEAR(ceilings.flop_per_s(MathPath::cuda_core_fp32), 51e12, 1e12);
  EXPECT_THROW(ceilings_from_json(nlohmann::json{{"copy", {{"bytes_per_s", 1}}}}), std::runtime_error);
}

TEST(Roofline, AnElementwiseKernelNearTheCopyBandwidthIsMemoryBound) {
  const auto kernels = parse_ncu_raw_csv(ncu_fixture("gelu_tanh_raw.csv"));
  const KernelWork work = work_from_ncu(kernels.front());
  EXPECT_EQ(work.path, MathPath::cuda_core_fp32);
  // 2·FFMA + FADD + FMUL thread instructions, as ncu counted them.
  EXPECT_DOUBLE_EQ(work.flops, 2 * 33554432.0 + 33554432.0 + 201326632.0);
  const auto position = place_on_roofline(work, h100());
  EXPECT_EQ(position.bound, KernelBound::memory);
  EXPECT_NEAR(position.dram_fraction, (134232320.0 + 113031168.0) / 86880e-9 / 3.001e12, 0.01);
  EXPECT_GT(position.dram_fraction, 0.9);
  EXPECT_LT(position.intensity, position.ridge);
  ASSERT_FALSE(position.diagnosis.empty());
  EXPECT_NE(position.diagnosis.front().find("fewer"), std::string::npos) << position.diagnosis.front();
}

TEST(Roofline, ABf16BatchedMatmulUsesTheTensorCoreCeiling) {
  const auto kernels = parse_ncu_raw_csv(ncu_fixture("bmm_bf16_raw.csv"));
  const KernelWork work = work_from_ncu(kernels.front());
  EXPECT_EQ(work.path, MathPath::tensor_bf16);
  EXPECT_DOUBLE_EQ(work.flops, 2.0 * 32 * 1024 * 1024 * 1024);  // 2·B·M·N·K
  const auto position = place_on_roofline(work, h100());
  EXPECT_EQ(position.bound, KernelBound::compute);
  EXPECT_GT(position.intensity, position.ridge);
  EXPECT_NEAR(position.compute_fraction, work.flops / 145728e-9 / 789.07e12, 0.01);
  EXPECT_NE(position.diagnosis.front().find("tensor cores"), std::string::npos);
  const auto document = to_json(position);
  EXPECT_EQ(document["bound"], "compute-bound");
}

TEST(Roofline, ShortKernelsAreLaunchBoundAndStarvedOnesLatencyBound) {
  KernelWork tiny{.name = "tiny", .seconds = 2e-6, .dram_bytes = 4096, .flops = 1024};
  EXPECT_EQ(place_on_roofline(tiny, h100()).bound, KernelBound::launch);

  KernelWork starved{.name = "starved",
                     .seconds = 1e-3,
                     .dram_bytes = 300e6,  // 10% of what the copy bandwidth moves in 1 ms
                     .flops = 1e9,
                     .achieved_occupancy_pct = 12,
                     .waves_per_sm = 0.25,
                     .registers_per_thread = 255};
  const auto position = place_on_roofline(starved, h100());
  EXPECT_EQ(position.bound, KernelBound::latency);
  EXPECT_NEAR(position.fraction_of_roofline, 0.1, 0.01);
  ASSERT_EQ(position.diagnosis.size(), 3U);
  EXPECT_NE(position.diagnosis[0].find("25% of one wave"), std::string::npos) << position.diagnosis[0];
  EXPECT_NE(position.diagnosis[1].find("255 registers"), std::string::npos) << position.diagnosis[1];

  KernelWork fp32_math{.name = "fp32", .seconds = 1e-3, .dram_bytes = 1e6, .flops = 45e9};
  const auto compute = place_on_roofline(fp32_math, h100());
  EXPECT_EQ(compute.bound, KernelBound::compute);
  EXPECT_NE(compute.diagnosis.front().find("tensor cores"), std::string::npos);
}

TEST(Roofline, AProfileWithoutTheNeededMetricsIsAClearError) {
  NcuKernel kernel{
      .name = "k", .block_size = "", .grid_size = "", .metrics = {{"gpu__time_duration.sum", 1000}}};
  EXPECT_THROW(work_from_ncu(kernel), std::runtime_error);
  KernelWork zero{.name = "zero"};
  EXPECT_THROW(place_on_roofline(zero, h100()), std::runtime_error);
}

}  // namespace profile_roofline_test
}  // namespace kforge::profile
