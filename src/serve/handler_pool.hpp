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

// The threads that run request handlers: up to `max_threads`, started as they are needed; beyond that,
// tasks wait in order (handlers that wait for an evaluation answer later and hold no thread meanwhile).
// A task goes to the most recently idle thread: under a steady load the same few threads serve every
// request, with their allocator caches and stacks warm. A thread idle for `release_after` runs
// `on_idle` once (the service hands its allocator cache back there); idle for `exit_after` it ends, so
// after a burst the threads, their stacks and caches go back to the system (0: threads never end).
class HandlerPool {
 public:
  HandlerPool(std::size_t max_threads, std::chrono::milliseconds release_after, std::function<void()> on_idle,
              std::chrono::milliseconds exit_after = std::chrono::milliseconds(0));
  ~HandlerPool();  // join()
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;
  HandlerPool(HandlerPool&&) = delete;
  HandlerPool& operator=(HandlerPool&&) = delete;

  // Runs `task` on a pool thread. After join() the task is dropped (returns false).
  bool post(std::function<void()> task);
  // Runs the tasks already posted, then stops and joins every thread. Idempotent.
  void join();
  // Threads alive now, and those waiting for a task.
  std::size_t threads() const;
  std::size_t idle_threads() const;

 private:
  struct Worker {
    std::condition_variable wake;
    std::function<void()> task;  // set by post() while the worker is idle
    bool ended = false;          // run() returned after idling for exit_after: join and drop it
    std::thread thread;
  };

  void run(Worker& worker);
  // With mutex_ held: the next task for a thread that just finished one, or none.
  std::function<void()> next_queued();
  // With mutex_ held: waits (idle) until a task arrives, stopping, or the thread should end (false).
  bool wait_for_task(std::unique_lock<std::mutex>& lock, Worker& worker);
  // With mutex_ held: joins and forgets the workers that ended.
  void reap_ended();

  const std::size_t max_threads_;
  const std::chrono::milliseconds release_after_;
  const std::function<void()> on_idle_;
  const std::chrono::milliseconds exit_after_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Worker>> workers_;  // every worker not yet reaped
  std::vector<Worker*> idle_;                     // idle workers, the most recently idle last
  std::deque<std::function<void()>> queued_;      // tasks waiting for a thread (all threads busy)
  std::size_t ended_ = 0;                         // workers that ended and are not reaped yet
  bool stopping_ = false;
};

}  // namespace kforge::serve
