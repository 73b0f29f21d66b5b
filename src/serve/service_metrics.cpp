#include "serve/service_metrics.hpp"

#include <fmt/format.h>

namespace kforge::serve {

void ServiceMetrics::Histogram::observe(double seconds) {
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets.at(i)) {
      ++counts.at(i);
    }
  }
  ++count;
  sum += seconds;
}

void ServiceMetrics::request(const std::string& route, int status, double seconds) {
  const std::lock_guard lock(mutex_);
  ++requests_[{route, status}];
  request_seconds_[route].observe(seconds);
}

void ServiceMetrics::evaluation(const std::string& outcome, const std::string& failed_stage, double seconds) {
  const std::lock_guard lock(mutex_);
  ++evaluations_[{outcome, failed_stage}];
  evaluation_seconds_.observe(seconds);
}

void ServiceMetrics::render_histogram(std::string& out, const std::string& name, const std::string& labels,
                                      const Histogram& histogram) {
  const std::string separator = labels.empty() ? "" : ",";
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, separator, kBuckets.at(i),
                       histogram.counts.at(i));
  }
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, separator, histogram.count);
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out +=
      fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, braces, histogram.sum, name, braces, histogram.count);
}

std::string ServiceMetrics::render(std::size_t queued, std::size_t running, std::size_t in_flight) const {
  const std::lock_guard lock(mutex_);
  std::string out;
  out += "# HELP kforge_queue_depth Evaluation jobs waiting to start.\n# TYPE kforge_queue_depth gauge\n";
  out += fmt::format("kforge_queue_depth {}\n", queued);
  out += "# HELP kforge_jobs_running Evaluation jobs running.\n# TYPE kforge_jobs_running gauge\n";
  out += fmt::format("kforge_jobs_running {}\n", running);
  out += "# HELP kforge_http_in_flight HTTP requests being handled.\n# TYPE kforge_http_in_flight gauge\n";
  out += fmt::format("kforge_http_in_flight {}\n", in_flight);
  out += "# HELP kforge_http_requests_total HTTP requests by route and status.\n";
  out += "# TYPE kforge_http_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    out += fmt::format("kforge_http_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", key.first, key.second,
                       count);
  }
  out += "# HELP kforge_http_request_seconds HTTP request latency by route.\n";
  out += "# TYPE kforge_http_request_seconds histogram\n";
  for (const auto& [route, histogram] : request_seconds_) {
    render_histogram(out, "kforge_http_request_seconds", fmt::format("route=\"{}\"", route), histogram);
  }
  out += "# HELP kforge_evaluations_total Evaluations by outcome and failed stage.\n";
  out += "# TYPE kforge_evaluations_total counter\n";
  for (const auto& [key, count] : evaluations_) {
    out += fmt::format("kforge_evaluations_total{{outcome=\"{}\",stage=\"{}\"}} {}\n", key.first, key.second,
                       count);
  }
  out +=
      "# HELP kforge_evaluation_seconds Time per evaluation.\n# TYPE kforge_evaluation_seconds histogram\n";
  render_histogram(out, "kforge_evaluation_seconds", "", evaluation_seconds_);
  return out;
}

}  // namespace kforge::serve
