#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

namespace kforge::runner {

// Who may use one GPU right now, inside one kforge process: any number of evaluations compile and
// check correctness side by side ("shared" use, one worker call at a time), but timing needs the GPU to
// itself ("exclusive" use). Between kforge processes the TimingLease (an flock) does the same for timing.
//
// Timing requests gather: a request lets shared users keep coming for up to `gather` (it starts at
// once if the GPU falls idle first); then the gate closes to new shared users until every waiting
// timing request has run. Closing at the first request would stall all evaluations behind the longest
// call in flight once per timing run; gathering pays that stall once per batch of timing runs, and
// the window bounds how long timing can be put off.
//
// A shared user that can be paused (a whole program, such as a TritonBench test block, rather than one
// bounded worker call) is stopped when the window runs out instead of being waited for, and continued
// once the gathered timing requests have run: one slow or hanging program no longer holds every timing
// run, and through them every evaluation, for its whole time limit.
class GpuGate {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kDefaultGather{2000};

  explicit GpuGate(std::chrono::milliseconds gather = kDefaultGather) : gather_(gather) {}

  // What the gate calls to stop and continue a pausable shared user's work (from the timing thread).
  class Pausable {
   public:
    Pausable() = default;
    Pausable(const Pausable&) = delete;
    Pausable& operator=(const Pausable&) = delete;
    Pausable(Pausable&&) = delete;
    Pausable& operator=(Pausable&&) = delete;
    virtual ~Pausable() = default;
    virtual void pause() = 0;
    virtual void resume() = 0;
  };

  // RAII: held from construction to destruction; waited() is how long it took to get in.
  class SharedUse {
   public:
    explicit SharedUse(GpuGate* gate, Pausable* pausable = nullptr);
    SharedUse(const SharedUse&) = delete;
    SharedUse& operator=(const SharedUse&) = delete;
    SharedUse(SharedUse&&) = delete;
    SharedUse& operator=(SharedUse&&) = delete;
    ~SharedUse();
    Clock::duration waited() const { return waited_; }

   private:
    friend class GpuGate;
    GpuGate* gate_;
    Pausable* pausable_;
    bool paused_ = false;  // guarded by the gate's mutex
    Clock::duration waited_{};
  };

  class ExclusiveUse {
   public:
    explicit ExclusiveUse(GpuGate* gate);
    ExclusiveUse(const ExclusiveUse&) = delete;
    ExclusiveUse& operator=(const ExclusiveUse&) = delete;
    ExclusiveUse(ExclusiveUse&&) = delete;
    ExclusiveUse& operator=(ExclusiveUse&&) = delete;
    ~ExclusiveUse();
    Clock::duration waited() const { return waited_; }

   private:
    GpuGate* gate_;
    Clock::duration waited_{};
  };

  // How many shared users there are, whether timing holds the GPU and whether the gate is closed to
  // new shared users (for tests and progress).
  std::size_t shared_users() const;
  bool exclusive_held() const;
  bool closed_to_shared() const;
  // Seconds timing has held this GPU exclusively so far (the GPU lease busy time of the metrics).
  double exclusive_seconds() const;

 private:
  void lock_shared(SharedUse* use);
  void unlock_shared(SharedUse* use);
  void pause_pausable_users();  // with mutex_ held
  void resume_paused_users();   // with mutex_ held
  void lock_exclusive();
  void unlock_exclusive();

  std::chrono::milliseconds gather_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t shared_ = 0;            // shared users holding the GPU (paused ones do not)
  std::vector<SharedUse*> pausable_;  // pausable shared users, paused or not
  std::size_t exclusive_waiting_ = 0;
  bool exclusive_ = false;
  bool closed_ = false;  // a timing request's window ran out: no new shared use until timing drains
  Clock::time_point exclusive_since_;
  Clock::duration exclusive_total_{};
};

}  // namespace kforge::runner
