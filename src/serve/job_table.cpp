#include "serve/job_table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "serve/random_hex.hpp"

namespace kforge::serve {

JobTable::JobTable(std::size_t keep_finished)
    : keep_finished_(keep_finished), waiter_thread_([this] { run_waiters(); }) {}

JobTable::~JobTable() { close(); }

void JobTable::close() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [deadline, waiter] : waiters_) {
      due_.emplace_back(std::move(waiter.callback), finished(waiter.job));
    }
    waiters_.clear();
  }
  waiters_changed_.notify_all();
  if (waiter_thread_.joinable()) {
    waiter_thread_.join();
  }
}

std::string JobTable::create(std::size_t completions, nlohmann::json info) {
  const std::lock_guard lock(mutex_);
  auto id = fmt::format("{:06x}-{}", next_++, random_hex(16));  // unguessable: no reading others' jobs
  Job job;
  job.results.assign(completions, nullptr);
  job.total = completions;
  job.info = std::move(info);
  jobs_.emplace(id, std::move(job));
  return id;
}

void JobTable::start(const std::string& id) {
  const std::lock_guard lock(mutex_);
  if (auto found = jobs_.find(id); found != jobs_.end() && found->second.status == "queued") {
    found->second.status = "running";
    ++running_;
  }
  changed_.notify_all();
}

void JobTable::set_result(const std::string& id, std::size_t index, nlohmann::json result) {
  const std::lock_guard lock(mutex_);
  auto found = jobs_.find(id);
  if (found == jobs_.end() || index >= found->second.results.size()) {
    return;
  }
  if (found->second.results[index].is_null()) {
    ++found->second.done;
  }
  found->second.results[index] = std::move(result);
  changed_.notify_all();
}

void JobTable::finish(const std::string& id, std::optional<std::string> error) {
  const std::lock_guard lock(mutex_);
  auto found = jobs_.find(id);
  if (found == jobs_.end()) {
    return;
  }
  auto& job = found->second;
  if (job.status == "running") {
    --running_;
  }
  job.status = error ? "failed" : "done";
  job.error = std::move(error);
  // Kept as text from now on: a tenth of the memory of the JSON tree, and answers need only the text.
  job.results_text =
      nlohmann::json(job.results).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  job.results = {};
  finished_order_.push_back(id);
  while (finished_order_.size() > keep_finished_) {
    jobs_.erase(finished_order_.front());
    finished_order_.pop_front();
  }
  bool woke = false;
  for (auto waiter = waiters_.begin(); waiter != waiters_.end();) {
    if (waiter->second.job == id) {
      due_.emplace_back(std::move(waiter->second.callback), true);
      waiter = waiters_.erase(waiter);
      woke = true;
    } else {
      ++waiter;
    }
  }
  changed_.notify_all();
  if (woke) {
    waiters_changed_.notify_one();
  }
}

bool JobTable::finished(const std::string& id) const {
  const auto found = jobs_.find(id);
  return found == jobs_.end() || found->second.status == "done" || found->second.status == "failed";
}

void JobTable::when_finished(const std::string& id, Clock::time_point deadline,
                             FinishedCallback on_finished) {
  bool done = false;
  {
    const std::lock_guard lock(mutex_);
    done = finished(id);
    if (!done && !stopping_ && Clock::now() < deadline) {
      const bool earliest = waiters_.empty() || deadline < waiters_.begin()->first;
      waiters_.emplace(deadline, Waiter{id, std::move(on_finished)});
      if (earliest) {
        waiters_changed_.notify_one();
      }
      return;
    }
  }
  on_finished(done);
}

void JobTable::run_waiters() {
  std::unique_lock lock(mutex_);
  while (true) {
    while (!due_.empty()) {
      auto [callback, finished_in_time] = std::move(due_.front());
      due_.pop_front();
      lock.unlock();
      try {
        callback(finished_in_time);
      } catch (...) {  // a waiter's failure is its own: the others are still answered
      }
      callback = nullptr;  // what it captured is released outside the lock
      lock.lock();
    }
    if (stopping_) {  // close() made every waiter due: all are answered
      return;
    }
    const auto now = Clock::now();
    while (!waiters_.empty() && waiters_.begin()->first <= now) {
      due_.emplace_back(std::move(waiters_.begin()->second.callback), false);
      waiters_.erase(waiters_.begin());
    }
    if (!due_.empty()) {
      continue;
    }
    if (waiters_.empty()) {
      waiters_changed_.wait(lock);
    } else {
      // A copy: wait_until reads the deadline again after waking, and the waiter may be gone by then.
      const auto next_deadline = waiters_.begin()->first;
      waiters_changed_.wait_until(lock, next_deadline);
    }
  }
}

std::size_t JobTable::waiters() const {
  const std::lock_guard lock(mutex_);
  return waiters_.size() + due_.size();
}

std::optional<std::string> JobTable::document(const std::string& id, bool with_results) const {
  const std::lock_guard lock(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end()) {
    return std::nullopt;
  }
  const auto& job = found->second;
  nlohmann::json head = {
      {"job_id", id}, {"status", job.status}, {"done", job.done}, {"total", job.total}, {"info", job.info}};
  if (job.error) {
    head["error"] = *job.error;
  }
  auto text = head.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (with_results) {
    text.pop_back();  // the closing brace: the results follow as the last member
    text += R"(,"results":)";
    text += job.results_text.empty()
                ? nlohmann::json(job.results).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                : job.results_text;
    text += '}';
  }
  return text;
}

bool JobTable::wait(const std::string& id, Clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_until(lock, deadline, [&]() { return finished(id); });
}

std::size_t JobTable::running() const {
  const std::lock_guard lock(mutex_);
  return running_;
}

}  // namespace kforge::serve
