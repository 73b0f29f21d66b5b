#include "runner/gpu_gate.hpp"

namespace kforge::runner {

GpuGate::SharedUse::SharedUse(GpuGate* gate) : gate_(gate) {
  if (gate_ != nullptr) {
    gate_->lock_shared();
  }
}

GpuGate::SharedUse::~SharedUse() {
  if (gate_ != nullptr) {
    gate_->unlock_shared();
  }
}

GpuGate::ExclusiveUse::ExclusiveUse(GpuGate* gate) : gate_(gate) {
  if (gate_ != nullptr) {
    gate_->lock_exclusive();
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

void GpuGate::lock_shared() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !exclusive_ && exclusive_waiting_ == 0; });
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
  changed_.wait(lock, [this] { return !exclusive_ && shared_ == 0; });
  --exclusive_waiting_;
  exclusive_ = true;
}

void GpuGate::unlock_exclusive() {
  {
    const std::lock_guard lock(mutex_);
    exclusive_ = false;
  }
  changed_.notify_all();
}

}  // namespace kforge::runner
