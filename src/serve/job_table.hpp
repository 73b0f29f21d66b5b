#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge::serve {

// Evaluation jobs of the service and their results, kept in memory. A job holds one result slot
// per completion, filled as each finishes; finished jobs are kept until `keep_finished` newer ones
// have finished (every verdict is also in the result store, which outlives the service).
class JobTable {
 public:
  explicit JobTable(std::size_t keep_finished = 10'000);

  std::string create(std::size_t completions, nlohmann::json info);
  void start(const std::string& id);
  void set_result(const std::string& id, std::size_t index, nlohmann::json result);
  void finish(const std::string& id, std::optional<std::string> error = std::nullopt);

  // {"job_id", "status": queued|running|done|failed, "done", "total", "results" (when done or asked)}
  std::optional<nlohmann::json> snapshot(const std::string& id, bool with_results) const;
  // Waits until the job is finished or the deadline passes; true when finished.
  bool wait(const std::string& id, std::chrono::steady_clock::time_point deadline) const;

  std::size_t running() const;

 private:
  std::size_t count(const std::string& status) const;

  struct Job {
    std::string status = "queued";
    std::vector<nlohmann::json> results;
    std::size_t done = 0;
    nlohmann::json info;
    std::optional<std::string> error;
  };
  std::size_t keep_finished_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::map<std::string, Job> jobs_;
  std::deque<std::string> finished_order_;
  std::size_t next_ = 0;
};

}  // namespace kforge::serve
