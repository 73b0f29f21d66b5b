#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kforge::serve {

// Evaluation jobs of the service and their results, kept in memory. A job holds one result slot
// per completion, filled as each finishes; finished jobs are kept until `keep_finished` newer ones
// have finished (every verdict is also in the result store, which outlives the service).
class JobTable {
 public:
  using Clock = std::chrono::steady_clock;
  // Called once: true when the job finished (or is unknown), false when the deadline came first.
  using FinishedCallback = std::function<void(bool finished)>;

  explicit JobTable(std::size_t keep_finished = 10'000);
  ~JobTable();  // close()
  JobTable(const JobTable&) = delete;
  JobTable& operator=(const JobTable&) = delete;
  JobTable(JobTable&&) = delete;
  JobTable& operator=(JobTable&&) = delete;

  std::string create(std::size_t completions, nlohmann::json info);
  void start(const std::string& id);
  void set_result(const std::string& id, std::size_t index, nlohmann::json result);
  void finish(const std::string& id, std::optional<std::string> error = std::nullopt);

  // The job document as JSON text: {"job_id", "status": queued|running|done|failed, "done", "total",
  // "info", "error" (failed only), "results" (when asked; null for those not finished)}; none for an
  // unknown job.
  std::optional<std::string> document(const std::string& id, bool with_results) const;
  // Waits until the job is finished or the deadline passes; true when finished.
  bool wait(const std::string& id, Clock::time_point deadline) const;
  // Calls `on_finished` once the job has finished or the deadline has passed, without holding a thread
  // meanwhile: at once in this thread when the job is already finished, else on the table's waiter
  // thread (never inside set_result or finish, which the engine calls under its delivery lock).
  // After close(): at once in this thread.
  void when_finished(const std::string& id, Clock::time_point deadline, FinishedCallback on_finished);
  // Calls every waiting callback now (finished or not, as the job stands), then stops the waiter
  // thread. Once it returns no callback runs on that thread again, so what the callbacks refer to (the
  // API, its metrics) may go. Idempotent.
  void close();

  std::size_t running() const;  // jobs started and not finished
  std::size_t waiters() const;  // callbacks registered and not yet called

 private:
  struct Job {
    std::string status = "queued";
    std::vector<nlohmann::json> results;  // while it runs
    std::string results_text;             // once finished: the results array as JSON text
    std::size_t total = 0;
    std::size_t done = 0;
    nlohmann::json info;
    std::optional<std::string> error;
  };
  struct Waiter {
    std::string job;
    FinishedCallback callback;
  };
  bool finished(const std::string& id) const;  // with mutex_ held
  void run_waiters();

  std::size_t keep_finished_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::map<std::string, Job> jobs_;
  std::deque<std::string> finished_order_;
  std::size_t next_ = 0;
  std::size_t running_ = 0;
  std::multimap<Clock::time_point, Waiter> waiters_;   // by deadline
  std::deque<std::pair<FinishedCallback, bool>> due_;  // to call on the waiter thread
  std::condition_variable waiters_changed_;
  bool stopping_ = false;      // close() began: the waiter thread calls what is due and returns
  std::thread waiter_thread_;  // last: it starts once the state above exists
};

}  // namespace kforge::serve
