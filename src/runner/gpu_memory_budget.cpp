#include "runner/gpu_memory_budget.hpp"

namespace kforge::runner {

GpuMemoryBudget::Reservation::Reservation(GpuMemoryBudget* budget, std::uint64_t bytes)
    : budget_(budget), bytes_(bytes) {
  if (budget_ != nullptr) {
    budget_->reserve(bytes_);
  }
}

GpuMemoryBudget::Reservation::~Reservation() {
  if (budget_ != nullptr) {
    budget_->release(bytes_);
  }
}

void GpuMemoryBudget::set_capacity_once(std::uint64_t bytes) {
  const std::lock_guard lock(mutex_);
  if (capacity_ == 0) {
    capacity_ = bytes;
  }
  changed_.notify_all();
}

std::uint64_t GpuMemoryBudget::capacity() const {
  const std::lock_guard lock(mutex_);
  return capacity_;
}

std::uint64_t GpuMemoryBudget::reserved() const {
  const std::lock_guard lock(mutex_);
  return reserved_;
}

void GpuMemoryBudget::reserve(std::uint64_t bytes) {
  std::unique_lock lock(mutex_);
  // Wait while others hold memory and this would overflow; alone, it always proceeds.
  changed_.wait(lock, [&] { return capacity_ == 0 || reserved_ == 0 || reserved_ + bytes <= capacity_; });
  reserved_ += bytes;
}

void GpuMemoryBudget::release(std::uint64_t bytes) {
  {
    const std::lock_guard lock(mutex_);
    reserved_ -= bytes;
  }
  changed_.notify_all();
}

}  // namespace kforge::runner
