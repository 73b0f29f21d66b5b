#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <ostream>
#include <string>

namespace kforge::report {

// Progress of a batch on stderr: on a terminal one line redrawn in place (bar, done/total, outcomes,
// throughput, ETA); elsewhere a plain line every 10% or 30 s. Thread-safe.
class ProgressDisplay {
 public:
  ProgressDisplay(std::ostream& out, std::size_t total, bool terminal);
  void record(const std::string& outcome, bool from_store);
  void finish();

 private:
  std::string line() const;

  std::ostream& out_;
  std::size_t total_;
  bool terminal_;
  std::size_t done_ = 0;
  std::size_t accepted_ = 0;
  std::size_t rejected_ = 0;
  std::size_t errors_ = 0;
  std::size_t stored_ = 0;
  std::size_t last_printed_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_print_time_ = start_;
  std::mutex mutex_;
};

}  // namespace kforge::report
