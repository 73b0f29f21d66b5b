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

void ServiceMetrics::rejected(int status, const std::string& code) {
  const std::lock_guard lock(mutex_);
  ++rejected_[{status, code}];
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

namespace {

void gauge(std::string& out, const char* name, const char* help, std::size_t value) {
  out += fmt::format("# HELP {0} {1}\n# TYPE {0} gauge\n{0} {2}\n", name, help, value);
}

void counter(std::string& out, const char* name, const char* help, std::size_t value) {
  out += fmt::format("# HELP {0} {1}\n# TYPE {0} counter\n{0} {2}\n", name, help, value);
}

// What the shared evaluation engine holds and has done.
void render_engine(std::string& out, const schedule::EngineCounters& engine) {
  gauge(out, "kforge_queue_depth", "Completions waiting for an evaluation slot.", engine.queued);
  gauge(out, "kforge_evaluations_running", "Completions being evaluated.", engine.running);
  gauge(out, "kforge_judges_alive", "Problem judges alive (busy or kept warm).", engine.judges_alive);
  counter(out, "kforge_evaluations_screened_total",
          "Completions decided by code extraction and static rules alone.", engine.screened);
  counter(out, "kforge_evaluations_from_store_total", "Completions answered from the result store.",
          engine.from_store);
  counter(out, "kforge_evaluation_retries_total", "Evaluations run again after a lost judge or worker.",
          engine.retries);
  counter(out, "kforge_judge_starts_total", "Problem judges started.", engine.judge_starts);
  out +=
      "# HELP kforge_worker_restarts_total Workers replaced after they died (not the candidate's "
      "fault): judges, candidate zygotes.\n# TYPE kforge_worker_restarts_total counter\n";
  out += fmt::format("kforge_worker_restarts_total{{kind=\"judge\"}} {}\n", engine.judge_restarts);
  out += fmt::format("kforge_worker_restarts_total{{kind=\"zygote\"}} {}\n", engine.zygote_restarts);
  out +=
      "# HELP kforge_gpu_lease_busy_seconds_total Seconds timing held each GPU exclusively.\n"
      "# TYPE kforge_gpu_lease_busy_seconds_total counter\n";
  for (const auto& [device, seconds] : engine.timing_busy_s) {
    out += fmt::format("kforge_gpu_lease_busy_seconds_total{{device=\"{}\"}} {}\n", device, seconds);
  }
}

}  // namespace

std::string ServiceMetrics::render(const schedule::EngineCounters& engine, std::size_t jobs_running,
                                   std::size_t in_flight) const {
  const std::lock_guard lock(mutex_);
  std::string out;
  render_engine(out, engine);
  gauge(out, "kforge_jobs_running", "Evaluation requests (jobs) not finished.", jobs_running);
  gauge(out, "kforge_http_in_flight", "HTTP requests being handled.", in_flight);
  out += "# HELP kforge_http_requests_total HTTP requests by route and status.\n";
  out += "# TYPE kforge_http_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    out += fmt::format("kforge_http_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", key.first, key.second,
                       count);
  }
  out +=
      "# HELP kforge_http_rejected_total Requests refused before routing (connection limit, size limits, "
      "malformed HTTP) by status and error code.\n# TYPE kforge_http_rejected_total counter\n";
  for (const auto& [key, count] : rejected_) {
    out += fmt::format("kforge_http_rejected_total{{status=\"{}\",code=\"{}\"}} {}\n", key.first, key.second,
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
