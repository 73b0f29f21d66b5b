#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kforge::runner {

// How much GPU memory the evaluations in flight on one GPU may count on. Each evaluation reserves an
// estimate (from its problem's input size) before its candidate starts and returns it when done; one that
// does not fit waits. A single evaluation larger than the whole budget still runs, alone, so nothing waits
// forever. The capacity is learnt from the first judge on the GPU (its free memory at that moment).
class GpuMemoryBudget {
 public:
  // RAII: the reservation lasts from construction to destruction.
  class Reservation {
   public:
    Reservation(GpuMemoryBudget* budget, std::uint64_t bytes);
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    Reservation(Reservation&&) = delete;
    Reservation& operator=(Reservation&&) = delete;
    ~Reservation();

   private:
    GpuMemoryBudget* budget_;
    std::uint64_t bytes_;
  };

  // Sets the capacity the first time only (0 leaves it unlimited).
  void set_capacity_once(std::uint64_t bytes);
  std::uint64_t capacity() const;
  std::uint64_t reserved() const;

 private:
  void reserve(std::uint64_t bytes);
  void release(std::uint64_t bytes);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t capacity_ = 0;  // 0: unknown yet, nothing waits
  std::uint64_t reserved_ = 0;
};

}  // namespace kforge::runner
