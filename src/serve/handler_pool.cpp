#include "serve/handler_pool.hpp"

#include <algorithm>
#include <system_error>
#include <utility>

namespace kforge::serve {

HandlerPool::HandlerPool(std::size_t max_threads, std::chrono::milliseconds idle_after,
                         std::function<void()> on_idle)
    : max_threads_(std::max<std::size_t>(max_threads, 1)),
      idle_after_(idle_after),
      on_idle_(std::move(on_idle)) {}

HandlerPool::~HandlerPool() { join(); }

bool HandlerPool::post(std::function<void()> task) {
  std::unique_lock lock(mutex_);
  if (stopping_) {
    return false;
  }
  if (!idle_.empty()) {
    Worker* worker = idle_.back();
    idle_.pop_back();
    worker->task = std::move(task);
    lock.unlock();
    worker->wake.notify_one();
    return true;
  }
  if (workers_.size() < max_threads_) {
    auto worker = std::make_unique<Worker>();
    worker->task = std::move(task);
    try {
      threads_.emplace_back([this, raw = worker.get()] { run(*raw); });
      workers_.push_back(std::move(worker));
      return true;
    } catch (const std::system_error&) {  // no thread to be had now: wait for a busy one, if any
      if (workers_.empty()) {
        return false;
      }
      task = std::move(worker->task);
    }
  }
  queued_.push_back(std::move(task));
  return true;
}

std::function<void()> HandlerPool::next_queued() {
  if (queued_.empty()) {
    return nullptr;
  }
  auto task = std::move(queued_.front());
  queued_.pop_front();
  return task;
}

void HandlerPool::run(Worker& worker) {
  std::unique_lock lock(mutex_);
  while (true) {
    std::function<void()> task = worker.task ? std::exchange(worker.task, nullptr) : next_queued();
    if (task) {
      lock.unlock();
      try {
        task();
      } catch (...) {  // a handler's failure is its own: the thread serves the next request
      }
      task = nullptr;  // what the task captured is released outside the lock
      lock.lock();
      continue;
    }
    if (stopping_) {
      return;
    }
    idle_.push_back(&worker);
    bool released = false;
    while (!worker.task && !stopping_) {
      if (released) {
        worker.wake.wait(lock);
      } else if (!worker.wake.wait_for(lock, idle_after_, [&] { return worker.task || stopping_; })) {
        lock.unlock();
        if (on_idle_) {
          on_idle_();
        }
        lock.lock();
        released = true;
      }
    }
    if (!worker.task) {  // stopping: no longer available to post()
      idle_.erase(std::remove(idle_.begin(), idle_.end(), &worker), idle_.end());
    }
  }
}

void HandlerPool::join() {
  std::vector<std::thread> threads;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    threads.swap(threads_);
    for (const auto& worker : workers_) {
      worker->wake.notify_one();
    }
  }
  for (auto& thread : threads) {
    thread.join();
  }
}

std::size_t HandlerPool::threads() const {
  const std::lock_guard lock(mutex_);
  return workers_.size();
}

std::size_t HandlerPool::idle_threads() const {
  const std::lock_guard lock(mutex_);
  return idle_.size();
}

}  // namespace kforge::serve
