#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace kforge::runner {

// Who may use one GPU right now, inside one kforge process: any number of evaluations compile and
// check correctness side by side ("shared" use, one worker call at a time), but timing needs the GPU to
// itself ("exclusive" use). A waiting exclusive user blocks new shared users, so timing is never starved.
// Between kforge processes the TimingLease (an flock) does the same for timing.
class GpuGate {
 public:
  // RAII: held from construction to destruction.
  class SharedUse {
   public:
    explicit SharedUse(GpuGate* gate);
    SharedUse(const SharedUse&) = delete;
    SharedUse& operator=(const SharedUse&) = delete;
    SharedUse(SharedUse&&) = delete;
    SharedUse& operator=(SharedUse&&) = delete;
    ~SharedUse();

   private:
    GpuGate* gate_;
  };

  class ExclusiveUse {
   public:
    explicit ExclusiveUse(GpuGate* gate);
    ExclusiveUse(const ExclusiveUse&) = delete;
    ExclusiveUse& operator=(const ExclusiveUse&) = delete;
    ExclusiveUse(ExclusiveUse&&) = delete;
    ExclusiveUse& operator=(ExclusiveUse&&) = delete;
    ~ExclusiveUse();

   private:
    GpuGate* gate_;
  };

  // How many shared users there are and whether timing holds the GPU (for tests and progress).
  std::size_t shared_users() const;
  bool exclusive_held() const;

 private:
  void lock_shared();
  void unlock_shared();
  void lock_exclusive();
  void unlock_exclusive();

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t shared_ = 0;
  std::size_t exclusive_waiting_ = 0;
  bool exclusive_ = false;
};

}  // namespace kforge::runner
