#include "runner/gpu_gate.hpp"

namespace kforge::runner {

GpuGate::SharedUse::SharedUse(GpuGate* gate) : gate_(gate) {
  if (gate_ != nullptr) {
    const auto start = Clock::now();
    gate_->lock_shared();
    waited_ = Clock::now() - start;
  }
}

GpuGate::SharedUse::~SharedUse() {
  if (gate_ != nullptr) {
    gate_->unlock_shared();
  }
}

GpuGate::ExclusiveUse::ExclusiveUse(GpuGate* gate) : gate_(gate) {
  if (gate_ != nullptr) {
    const auto start = Clock::now();
    gate_->lock_exclusive();
    waited_ = Clock::now() - start;
  }
}

GpuGate::ExclusiveUse::~ExclusiveUse() {
  if (gate_ != nullptr) {
    gate_->unlock_exclusive();
  }
}

std::size_t GpuGate::shared_users() const {
  const std::lock_guard lock(mutex_);
  return shared_;
}

bool GpuGate::exclusive_held() const {
  const std::lock_guard lock(mutex_);
  return exclusive_;
}

double GpuGate::exclusive_seconds() const {
  const std::lock_guard lock(mutex_);
  const auto current = exclusive_ ? Clock::now() - exclusive_since_ : Clock::duration{};
  return std::chrono::duration<double>(exclusive_total_ + current).count();
}

bool GpuGate::closed_to_shared() const {
  const std::lock_guard lock(mutex_);
  return closed_;
}

void GpuGate::lock_shared() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !exclusive_ && !closed_; });
  ++shared_;
}

void GpuGate::unlock_shared() {
  {
    const std::lock_guard lock(mutex_);
    --shared_;
  }
  changed_.notify_all();
}

void GpuGate::lock_exclusive() {
  std::unique_lock lock(mutex_);
  ++exclusive_waiting_;
  const auto free = [this] { return !exclusive_ && shared_ == 0; };
  if (!changed_.wait_for(lock, gather_, [&] { return free() || closed_; })) {
    closed_ = true;  // the window ran out: let the calls in flight finish, admit no new ones
  }
  changed_.wait(lock, free);
  --exclusive_waiting_;
  exclusive_ = true;
  exclusive_since_ = Clock::now();
}

void GpuGate::unlock_exclusive() {
  {
    const std::lock_guard lock(mutex_);
    exclusive_ = false;
    exclusive_total_ += Clock::now() - exclusive_since_;
    if (exclusive_waiting_ == 0) {
      closed_ = false;  // every gathered timing request has run
    }
  }
  changed_.notify_all();
}

}  // namespace kforge::runner
