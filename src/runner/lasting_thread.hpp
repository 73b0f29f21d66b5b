#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>

namespace kforge::runner {

// A thread that starts the processes several threads share. Linux sends a worker's parent-death signal
// (PR_SET_PDEATHSIG, which every kforge worker sets) when the *thread* that forked it exits, not the
// process: a zygote forked by the first of a batch's threads died with that thread while the others
// still forked from it. Work given to run() happens on this thread, which lives as long as its owner.
class LastingThread {
 public:
  LastingThread();
  LastingThread(const LastingThread&) = delete;
  LastingThread& operator=(const LastingThread&) = delete;
  LastingThread(LastingThread&&) = delete;
  LastingThread& operator=(LastingThread&&) = delete;
  ~LastingThread();  // finishes the work already given, then joins

  // Runs `work` on this thread and waits for it; its result or exception is the caller's.
  template <typename Work>
  std::invoke_result_t<Work> run(Work work) {
    auto task = std::make_shared<std::packaged_task<std::invoke_result_t<Work>()>>(std::move(work));
    auto result = task->get_future();
    post([task] { (*task)(); });
    return result.get();
  }

 private:
  void post(std::function<void()> work);
  void serve();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;
  bool closing_ = false;
  std::thread thread_;  // last: started once the queue exists
};

}  // namespace kforge::runner
