#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kforge::serve {

// The threads that run request handlers. A handler may wait minutes for an evaluation, so the pool
// grows up to `max_threads` (one per allowed connection) instead of queueing behind waiters; beyond
// that, tasks wait in order. A task goes to the most recently idle thread: under a steady load the
// same few threads serve every request, with their allocator caches and stacks warm. A thread idle
// for `idle_after` runs `on_idle` once (the service hands its allocator cache back there), so memory
// follows the threads used lately rather than every thread that ever ran.
class HandlerPool {
 public:
  HandlerPool(std::size_t max_threads, std::chrono::milliseconds idle_after, std::function<void()> on_idle);
  ~HandlerPool();  // join()
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;
  HandlerPool(HandlerPool&&) = delete;
  HandlerPool& operator=(HandlerPool&&) = delete;

  // Runs `task` on a pool thread. After join() the task is dropped (returns false).
  bool post(std::function<void()> task);
  // Runs the tasks already posted, then stops and joins every thread. Idempotent.
  void join();
  // Threads started so far, and those waiting for a task now.
  std::size_t threads() const;
  std::size_t idle_threads() const;

 private:
  struct Worker {
    std::condition_variable wake;
    std::function<void()> task;  // set by post() while the worker is idle
  };

  void run(Worker& worker);
  // With mutex_ held: the next task for a thread that just finished one, or none.
  std::function<void()> next_queued();

  const std::size_t max_threads_;
  const std::chrono::milliseconds idle_after_;
  const std::function<void()> on_idle_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Worker>> workers_;  // every worker started, for join()
  std::vector<Worker*> idle_;                     // idle workers, the most recently idle last
  std::deque<std::function<void()>> queued_;      // tasks waiting for a thread (all threads busy)
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

}  // namespace kforge::serve
