#include "serve/handler_pool.hpp"

#include <algorithm>
#include <system_error>
#include <utility>

namespace kforge::serve {

HandlerPool::HandlerPool(std::size_t max_threads, std::chrono::milliseconds release_after,
                         std::function<void()> on_idle, std::chrono::milliseconds exit_after)
    : max_threads_(std::max<std::size_t>(max_threads, 1)),
      release_after_(release_after),
      on_idle_(std::move(on_idle)),
      exit_after_(exit_after) {}

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
  reap_ended();
  if (workers_.size() < max_threads_) {
    auto worker = std::make_unique<Worker>();
    worker->task = std::move(task);
    try {
      worker->thread = std::thread([this, raw = worker.get()] { run(*raw); });
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

void HandlerPool::reap_ended() {
  if (ended_ == 0) {
    return;
  }
  // An ended worker set `ended` under the lock and then only returns: joining it here is brief.
  for (auto& worker : workers_) {
    if (worker->ended && worker->thread.joinable()) {
      worker->thread.join();
    }
  }
  std::erase_if(workers_, [](const auto& worker) { return worker->ended; });
  ended_ = 0;
}

std::function<void()> HandlerPool::next_queued() {
  if (queued_.empty()) {
    return nullptr;
  }
  auto task = std::move(queued_.front());
  queued_.pop_front();
  return task;
}

bool HandlerPool::wait_for_task(std::unique_lock<std::mutex>& lock, Worker& worker) {
  idle_.push_back(&worker);
  const auto idle_since = std::chrono::steady_clock::now();
  bool released = false;
  const auto has_work = [&] { return worker.task || stopping_; };
  while (!has_work()) {
    if (!released) {
      if (!worker.wake.wait_for(lock, release_after_, has_work)) {
        lock.unlock();
        if (on_idle_) {
          on_idle_();
        }
        lock.lock();
        released = true;
      }
      continue;
    }
    if (exit_after_.count() <= 0) {
      worker.wake.wait(lock, has_work);
      continue;
    }
    const auto end_at = idle_since + exit_after_;
    if (!worker.wake.wait_until(lock, end_at, has_work) && std::chrono::steady_clock::now() >= end_at) {
      std::erase(idle_, &worker);  // post() no longer sees it
      return false;
    }
  }
  if (!worker.task) {  // stopping: no longer available to post()
    std::erase(idle_, &worker);
  }
  return true;
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
    if (!wait_for_task(lock, worker)) {
      worker.ended = true;
      ++ended_;
      return;
    }
  }
}

void HandlerPool::join() {
  std::vector<std::thread*> threads;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;  // from here on post() adds no worker: the list below is final
    for (const auto& worker : workers_) {
      worker->wake.notify_one();
      threads.push_back(&worker->thread);
    }
  }
  for (auto* thread : threads) {
    if (thread->joinable()) {
      thread->join();
    }
  }
}

std::size_t HandlerPool::threads() const {
  const std::lock_guard lock(mutex_);
  return workers_.size() - ended_;
}

std::size_t HandlerPool::idle_threads() const {
  const std::lock_guard lock(mutex_);
  return idle_.size();
}

}  // namespace kforge::serve
