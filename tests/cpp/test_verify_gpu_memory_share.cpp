#include <gtest/gtest.h>

#include <cstdint>

#include "verify/gpu_memory_share.hpp"

namespace kforge::verify {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kPlacements = std::uint64_t{384} << 20;  // one timing side's rotating placements

TEST(GpuMemoryShare, TheReferencesOwnWorkingMemoryWidensTheCandidatesShare) {
  // A convolution whose cuDNN workspace dwarfs its tensors: the candidate may use the same call.
  const auto footprint = ProblemFootprint::from_load_reply({{"input_bytes", kGiB / 2},
                                                            {"output_bytes", kGiB / 4},
                                                            {"parameter_bytes", 0},
                                                            {"reference_working_bytes", 5 * kGiB}});
  EXPECT_EQ(footprint.reference_working_bytes, 5 * kGiB);
  const auto without = candidate_gpu_memory_limit({kGiB / 2, kGiB / 4, 0, 0}, 80 * kGiB);
  EXPECT_EQ(without, 2 * kGiB + kPlacements + 6 * kGiB);  // 2 GiB, the placements, 8 x 0.75 GiB
  EXPECT_EQ(candidate_gpu_memory_limit(footprint, 80 * kGiB), without + 10 * kGiB);
  // The reference timed in the candidate's process (--reference-beside): one footprint and working set more
  EXPECT_EQ(candidate_gpu_memory_limit(footprint, 80 * kGiB, true),
            without + kPlacements + 15 * kGiB + 3 * kGiB / 4);
  EXPECT_EQ(candidate_gpu_memory_limit(footprint, 12 * kGiB), 12 * kGiB) << "never above the device";
}

TEST(GpuMemoryShare, AnOlderJudgeWithoutTheFieldCountsNothingForIt) {
  const auto footprint = ProblemFootprint::from_load_reply({{"input_bytes", kGiB}});
  EXPECT_EQ(footprint.reference_working_bytes, 0U);
  EXPECT_EQ(candidate_gpu_memory_limit(footprint, 0), 2 * kGiB + kPlacements + 8 * kGiB);
}

TEST(GpuMemoryShare, AnEvaluationReservesTheJudgesWorkingSetBesideTheCandidatesShare) {
  // KernelBench level 1 at its sizes: 6 GiB in, 6 GiB out. The judge holds its cached reference, the
  // trial's copies, a comparison's temporaries and the reruns of its checks beside the candidate.
  const ProblemFootprint footprint{6 * kGiB, 6 * kGiB, 0, kGiB};
  const auto candidate = candidate_gpu_memory_limit(footprint, 0);
  EXPECT_EQ(evaluation_gpu_memory(footprint, 0), candidate + kGiB + kPlacements + 6 * 12 * kGiB + 2 * kGiB);
  // A small problem reserves little more than the candidate's base share.
  const ProblemFootprint small{kGiB / 1024, kGiB / 1024, 0, 0};
  EXPECT_LT(evaluation_gpu_memory(small, 80 * kGiB), candidate_gpu_memory_limit(small, 80 * kGiB) + 2 * kGiB);
}

}  // namespace
}  // namespace kforge::verify
