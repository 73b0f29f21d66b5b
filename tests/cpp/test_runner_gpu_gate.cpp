#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "runner/gpu_gate.hpp"

namespace kforge::runner {
namespace {

using namespace std::chrono_literals;

TEST(GpuGate, ExclusiveUseWaitsForSharedUsersAndBlocksNewOnes) {
  GpuGate gate;
  std::atomic<int> shared_inside{0};
  std::atomic<bool> overlap{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      for (int round = 0; round < 50; ++round) {
        const GpuGate::SharedUse use(&gate);
        ++shared_inside;
        std::this_thread::sleep_for(50us);
        --shared_inside;
      }
    });
  }
  threads.emplace_back([&] {
    for (int round = 0; round < 20; ++round) {
      const GpuGate::ExclusiveUse use(&gate);
      EXPECT_TRUE(gate.exclusive_held());
      if (shared_inside.load() != 0) {
        overlap = true;
      }
      std::this_thread::sleep_for(100us);
      if (shared_inside.load() != 0) {
        overlap = true;
      }
    }
  });
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_FALSE(overlap) << "timing overlapped another evaluation's GPU work";
  EXPECT_EQ(gate.shared_users(), 0U);
  EXPECT_FALSE(gate.exclusive_held());
}

TEST(GpuGate, NullGateIsANoOp) {
  const GpuGate::SharedUse shared(nullptr);
  const GpuGate::ExclusiveUse exclusive(nullptr);
  SUCCEED();
}

}  // namespace
}  // namespace kforge::runner
