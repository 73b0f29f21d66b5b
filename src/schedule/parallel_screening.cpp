#include "schedule/parallel_screening.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>

#include "verify/eval_pipeline.hpp"

namespace kforge::schedule {

// One screen() call: its jobs are claimed one at a time by the caller and the helpers; the caller
// returns once every claimed job is finished.
struct ScreeningPool::Batch {
  // The caller's jobs and device: read only for a claimed job (the caller waits for those).
  const std::vector<EvalJob>* jobs = nullptr;
  const std::string* device = nullptr;
  std::size_t total = 0;
  std::vector<std::optional<verify::Verdict>> screened;
  std::atomic<std::size_t> next{0};
  std::size_t finished = 0;  // guarded by done_mutex
  std::mutex done_mutex;
  std::condition_variable done;

  // Screens unclaimed jobs until none is left.
  void work() noexcept {
    for (std::size_t i = next++; i < total; i = next++) {
      try {
        auto settings = (*jobs)[i].settings;
        settings.device = *device;
        screened[i] = verify::screen(settings);
      } catch (const std::exception&) {
        screened[i].reset();
      }
      const std::lock_guard lock(done_mutex);
      if (++finished == total) {
        done.notify_all();
      }
    }
  }
};

ScreeningPool::ScreeningPool(std::size_t helpers) {
  try {
    for (std::size_t i = 0; i < helpers; ++i) {
      threads_.emplace_back([this] { help(); });
    }
  } catch (const std::system_error&) {  // fewer threads to be had: the callers screen more themselves
  }
}

ScreeningPool::~ScreeningPool() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  threads_.clear();  // joins
}

void ScreeningPool::help() {
  while (true) {
    std::shared_ptr<Batch> batch;
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [this] { return stopping_ || !batches_.empty(); });
      if (stopping_) {
        return;
      }
      batch = batches_.front();
      if (batch->next.load() >= batch->total) {
        batches_.pop_front();  // every job is claimed: the owner waits for the last ones
        continue;
      }
    }
    batch->work();
  }
}

std::vector<std::optional<verify::Verdict>> ScreeningPool::screen(const std::vector<EvalJob>& jobs,
                                                                  const std::string& device) {
  auto batch = std::make_shared<Batch>();
  batch->jobs = &jobs;
  batch->device = &device;
  batch->total = jobs.size();
  batch->screened.resize(jobs.size());
  const bool share = jobs.size() > 1 && !threads_.empty();
  if (share) {
    {
      const std::lock_guard lock(mutex_);
      batches_.push_back(batch);
    }
    for (std::size_t i = 1; i < std::min(jobs.size(), threads_.size() + 1); ++i) {
      work_.notify_one();
    }
  }
  batch->work();
  {
    std::unique_lock lock(batch->done_mutex);
    batch->done.wait(lock, [&] { return batch->finished == jobs.size(); });
  }
  if (share) {
    const std::lock_guard lock(mutex_);
    std::erase(batches_, batch);  // when no helper got to it
  }
  return std::move(batch->screened);
}

std::size_t default_screening_threads() {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
}

std::vector<std::optional<verify::Verdict>> screen_in_parallel(const std::vector<EvalJob>& jobs,
                                                               const std::string& device,
                                                               std::size_t threads) {
  const std::size_t used = std::min(threads, jobs.size());
  ScreeningPool pool(used > 0 ? used - 1 : 0);
  return pool.screen(jobs, device);
}

}  // namespace kforge::schedule
