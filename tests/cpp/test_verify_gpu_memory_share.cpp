#include <gtest/gtest.h>

#include <cstdint>

#include "verify/gpu_memory_share.hpp"

namespace kforge::verify {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

TEST(GpuMemoryShare, TheReferencesOwnWorkingMemoryWidensTheCandidatesShare) {
  // A convolution whose cuDNN workspace dwarfs its tensors: the candidate may use the same call.
  const auto footprint = ProblemFootprint::from_load_reply({{"input_bytes", kGiB / 2},
                                                            {"output_bytes", kGiB / 4},
                                                            {"parameter_bytes", 0},
                                                            {"reference_working_bytes", 5 * kGiB}});
  EXPECT_EQ(footprint.reference_working_bytes, 5 * kGiB);
  const auto without = candidate_gpu_memory_limit({kGiB / 2, kGiB / 4, 0, 0}, 80 * kGiB);
  EXPECT_EQ(without, 2 * kGiB + 6 * kGiB);  // 2 GiB + 8 x 0.75 GiB
  EXPECT_EQ(candidate_gpu_memory_limit(footprint, 80 * kGiB), without + 10 * kGiB);
  // The reference timed in the candidate's process (--reference-beside): one footprint and working set more
  EXPECT_EQ(candidate_gpu_memory_limit(footprint, 80 * kGiB, true), without + 15 * kGiB + 3 * kGiB / 4);
  EXPECT_EQ(candidate_gpu_memory_limit(footprint, 12 * kGiB), 12 * kGiB) << "never above the device";
}

TEST(GpuMemoryShare, AnOlderJudgeWithoutTheFieldCountsNothingForIt) {
  const auto footprint = ProblemFootprint::from_load_reply({{"input_bytes", kGiB}});
  EXPECT_EQ(footprint.reference_working_bytes, 0U);
  EXPECT_EQ(candidate_gpu_memory_limit(footprint, 0), 2 * kGiB + 8 * kGiB);
}

}  // namespace
}  // namespace kforge::verify
