#include "runner/lasting_thread.hpp"

#include <utility>

namespace kforge::runner {

LastingThread::LastingThread() : thread_([this] { serve(); }) {}

LastingThread::~LastingThread() {
  {
    const std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void LastingThread::post(std::function<void()> work) {
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(work));
  }
  changed_.notify_all();
}

void LastingThread::serve() {
  for (;;) {
    std::function<void()> work;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) {
        return;  // closing, and nothing left to do
      }
      work = std::move(queue_.front());
      queue_.pop_front();
    }
    work();  // a packaged task: its exception goes to the caller's future
  }
}

}  // namespace kforge::runner
