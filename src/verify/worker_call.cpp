#include "verify/worker_call.hpp"

#include <sstream>
#include <vector>

namespace kforge::verify {
namespace {

constexpr std::size_t kLogLinesKept = 20;

std::string failure_kind(runner::WorkerFailureKind kind) {
  switch (kind) {
    case runner::WorkerFailureKind::timeout:
      return "timeout";
    case runner::WorkerFailureKind::exited:
      return "exited";
    case runner::WorkerFailureKind::signaled:
      return "crashed";
    case runner::WorkerFailureKind::protocol:
      return "protocol";
    case runner::WorkerFailureKind::forged:
      return "reply-forged";
    case runner::WorkerFailureKind::memory_limit:
      return "memory_limit";
  }
  return "protocol";
}

}  // namespace

CallResult call_worker(runner::WorkerProcess& worker, const nlohmann::json& request,
                       const runner::CallLimit& limit) {
  auto reply = worker.call(request, limit);
  CallResult result;
  if (const auto* failure = std::get_if<runner::WorkerFailure>(&reply)) {
    result.kind = failure_kind(failure->kind);
    result.message = failure->message;
    result.process_lost = true;
    return result;
  }
  auto& body = std::get<nlohmann::json>(reply);
  if (body.value("ok", false)) {
    result.ok = true;
    result.body = std::move(body);
    return result;
  }
  const auto& error =
      body.contains("error") && body["error"].is_object() ? body["error"] : nlohmann::json::object();
  result.kind = error.value("kind", "protocol");
  result.message = error.value("message", "the worker reported an error without a message");
  result.body = error;
  return result;
}

nlohmann::json CallResult::to_details(const std::string& log_tail) const {
  nlohmann::json details = {{"error_kind", kind}, {"message", message}};
  for (const char* key : {"exception", "frames", "traceback"}) {
    if (body.is_object() && body.contains(key)) {
      details[key] = body[key];
    }
  }
  if (!log_tail.empty()) {
    details["log_tail"] = log_tail;
  }
  return details;
}

std::string trim_log(const std::string& log_tail, const std::string& candidate_path) {
  std::vector<std::string> lines;
  std::istringstream stream(log_tail);
  for (std::string line; std::getline(stream, line);) {
    lines.push_back(line);
  }
  std::string candidate_lines;
  for (const auto& line : lines) {
    if (!candidate_path.empty() && line.find(candidate_path) != std::string::npos) {
      candidate_lines += line + "\n";
    }
  }
  std::string tail;
  const std::size_t first = lines.size() > kLogLinesKept ? lines.size() - kLogLinesKept : 0;
  for (std::size_t i = first; i < lines.size(); ++i) {
    tail += lines[i] + "\n";
  }
  if (candidate_lines.empty()) {
    return tail;
  }
  return "candidate frames:\n" + candidate_lines + "last lines of the log:\n" + tail;
}

}  // namespace kforge::verify
