#include "runner/gpu_gate.hpp"

namespace kforge::runner {

GpuGate::SharedUse::SharedUse(GpuGate* gate, Pausable* pausable) : gate_(gate), pausable_(pausable) {
  if (gate_ != nullptr) {
    const auto start = Clock::now();
    gate_->lock_shared(this);
    waited_ = Clock::now() - start;
  }
}

GpuGate::SharedUse::~SharedUse() {
  if (gate_ != nullptr) {
    gate_->unlock_shared(this);
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

void GpuGate::lock_shared(SharedUse* use) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !exclusive_ && !closed_; });
  ++shared_;
  if (use->pausable_ != nullptr) {
    pausable_.push_back(use);
  }
}

void GpuGate::unlock_shared(SharedUse* use) {
  {
    const std::lock_guard lock(mutex_);
    if (!use->paused_) {  // a paused user (its program ended by its own limit) no longer counted
      --shared_;
    }
    std::erase(pausable_, use);
  }
  changed_.notify_all();
}

void GpuGate::pause_pausable_users() {
  for (auto* use : pausable_) {
    if (!use->paused_) {
      use->pausable_->pause();
      use->paused_ = true;
      --shared_;
    }
  }
}

void GpuGate::resume_paused_users() {
  for (auto* use : pausable_) {
    if (use->paused_) {
      use->paused_ = false;
      ++shared_;
      use->pausable_->resume();
    }
  }
}

void GpuGate::lock_exclusive() {
  std::unique_lock lock(mutex_);
  ++exclusive_waiting_;
  const auto free = [this] { return !exclusive_ && shared_ == 0; };
  if (!changed_.wait_for(lock, gather_, [&] { return free() || closed_; })) {
    closed_ = true;  // the window ran out: let the calls in flight finish, admit no new ones
  }
  if (closed_) {
    pause_pausable_users();  // whole programs are stopped, not waited for
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
      resume_paused_users();
    }
  }
  changed_.notify_all();
}

}  // namespace kforge::runner
