#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "schedule/eval_job.hpp"
#include "verify/verdict.hpp"

namespace kforge::schedule {

// Threads that screen the completions of submissions (verify::screen: extract and the static rules,
// no Python) alongside the submitting thread. They live as long as the pool: a request does not pay
// for starting threads, and their allocator caches stay warm (about a tenth of a screening).
class ScreeningPool {
 public:
  // `helpers` threads besides each caller (0: every caller screens alone).
  explicit ScreeningPool(std::size_t helpers);
  ~ScreeningPool();
  ScreeningPool(const ScreeningPool&) = delete;
  ScreeningPool& operator=(const ScreeningPool&) = delete;
  ScreeningPool(ScreeningPool&&) = delete;
  ScreeningPool& operator=(ScreeningPool&&) = delete;

  // Screens each job's candidate on `device`, the caller's thread included. Element i is job i's
  // verdict when screening decided it, nullopt when the job goes on to the workers (or could not be
  // screened, even for lack of memory: the full evaluation then reports on it). A request of
  // several completions is answered in about the time of its slowest completion instead of the sum.
  std::vector<std::optional<verify::Verdict>> screen(const std::vector<EvalJob>& jobs,
                                                     const std::string& device);

 private:
  struct Batch;
  void help();

  std::mutex mutex_;
  std::condition_variable work_;
  std::deque<std::shared_ptr<Batch>> batches_;  // batches with unclaimed jobs, oldest first
  bool stopping_ = false;
  std::vector<std::jthread> threads_;  // last: they start once the state above exists
};

// The machine's cores, at most 8: the threads (caller included) that screen one submission.
std::size_t default_screening_threads();

// One-off screening on up to `threads` threads, the caller's included (a pool for one call).
std::vector<std::optional<verify::Verdict>> screen_in_parallel(const std::vector<EvalJob>& jobs,
                                                               const std::string& device,
                                                               std::size_t threads);

}  // namespace kforge::schedule
