#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "schedule/eval_engine.hpp"

namespace kforge::serve {

// The service's counters and latency histograms, rendered in the Prometheus text format.
class ServiceMetrics {
 public:
  void request(const std::string& route, int status, double seconds);
  // A request the HTTP layer refused before routing (503 too-many-connections, 413, 431, malformed).
  void rejected(int status, const std::string& code);
  void evaluation(const std::string& outcome, const std::string& failed_stage, double seconds);
  // Gauges and the engine's counters are read when rendering.
  std::string render(const schedule::EngineCounters& engine, std::size_t jobs_running,
                     std::size_t in_flight) const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                      0.1,   0.5,    1.0,   5.0,  30.0,  120.0};
  struct Histogram {
    std::array<std::size_t, kBuckets.size()> counts{};
    std::size_t count = 0;
    double sum = 0.0;
    void observe(double seconds);
  };
  static void render_histogram(std::string& out, const std::string& name, const std::string& labels,
                               const Histogram& histogram);

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, std::size_t> requests_;
  std::map<std::pair<int, std::string>, std::size_t> rejected_;
  std::map<std::string, Histogram> request_seconds_;
  std::map<std::pair<std::string, std::string>, std::size_t> evaluations_;
  Histogram evaluation_seconds_;
};

}  // namespace kforge::serve
