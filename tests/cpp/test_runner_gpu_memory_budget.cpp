#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "runner/gpu_memory_budget.hpp"

namespace kforge::runner {
namespace {

using namespace std::chrono_literals;

TEST(GpuMemoryBudget, ReservationsInFlightNeverExceedTheCapacity) {
  GpuMemoryBudget budget;
  budget.set_capacity_once(100);
  budget.set_capacity_once(1000);  // only the first capacity counts
  EXPECT_EQ(budget.capacity(), 100U);
  std::atomic<std::uint64_t> in_flight{0};
  std::atomic<std::uint64_t> peak{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        const GpuMemoryBudget::Reservation reservation(&budget, 30);
        const auto now = in_flight += 30;
        auto seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(50us);
        in_flight -= 30;
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_LE(peak.load(), 90U);  // three 30-byte reservations fit in 100, a fourth never did
  EXPECT_GE(peak.load(), 60U);  // and they did run side by side
  EXPECT_EQ(budget.reserved(), 0U);
}

TEST(GpuMemoryBudget, AReservationLargerThanTheCapacityRunsAlone) {
  GpuMemoryBudget budget;
  budget.set_capacity_once(100);
  std::atomic<bool> big_done{false};
  std::optional<GpuMemoryBudget::Reservation> small;
  small.emplace(&budget, 10);
  std::thread big([&] {
    const GpuMemoryBudget::Reservation reservation(&budget, 500);
    EXPECT_EQ(budget.reserved(), 500U);  // it waited for the small one and holds the GPU alone
    big_done = true;
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(big_done.load());
  small.reset();
  big.join();
  EXPECT_TRUE(big_done.load());
  EXPECT_EQ(budget.reserved(), 0U);
}

TEST(GpuMemoryBudget, WithoutACapacityNothingWaits) {
  GpuMemoryBudget budget;
  const GpuMemoryBudget::Reservation first(&budget, std::uint64_t{1} << 40);
  const GpuMemoryBudget::Reservation second(&budget, std::uint64_t{1} << 40);
  EXPECT_EQ(budget.reserved(), std::uint64_t{2} << 40);
  const GpuMemoryBudget::Reservation none(nullptr, 5);  // a CPU device has no budget
}

}  // namespace
}  // namespace kforge::runner
