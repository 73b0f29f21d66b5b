#include "serve/job_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>

namespace kforge::serve {
namespace {

// Unguessable ids: a client must not be able to read another client's job by counting.
std::string random_hex(std::size_t digits) {
  std::random_device device;
  std::string text;
  while (text.size() < digits) {
    text += fmt::format("{:08x}", device());
  }
  return text.substr(0, digits);
}

}  // namespace

JobTable::JobTable(std::size_t keep_finished) : keep_finished_(keep_finished) {}

std::string JobTable::create(std::size_t completions, nlohmann::json info) {
  const std::lock_guard lock(mutex_);
  auto id = fmt::format("{:06x}-{}", next_++, random_hex(16));
  Job job;
  job.results.assign(completions, nullptr);
  job.info = std::move(info);
  jobs_.emplace(id, std::move(job));
  return id;
}

void JobTable::start(const std::string& id) {
  const std::lock_guard lock(mutex_);
  if (auto found = jobs_.find(id); found != jobs_.end()) {
    found->second.status = "running";
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
  found->second.status = error ? "failed" : "done";
  found->second.error = std::move(error);
  finished_order_.push_back(id);
  while (finished_order_.size() > keep_finished_) {
    jobs_.erase(finished_order_.front());
    finished_order_.pop_front();
  }
  changed_.notify_all();
}

std::optional<nlohmann::json> JobTable::snapshot(const std::string& id, bool with_results) const {
  const std::lock_guard lock(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end()) {
    return std::nullopt;
  }
  const auto& job = found->second;
  nlohmann::json document = {{"job_id", id},
                             {"status", job.status},
                             {"done", job.done},
                             {"total", job.results.size()},
                             {"info", job.info}};
  if (job.error) {
    document["error"] = *job.error;
  }
  if (with_results) {
    document["results"] = job.results;
  }
  return document;
}

bool JobTable::wait(const std::string& id, std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_until(lock, deadline, [&]() {
    const auto found = jobs_.find(id);
    return found == jobs_.end() || found->second.status == "done" || found->second.status == "failed";
  });
}

std::size_t JobTable::count(const std::string& status) const {
  const std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(std::count_if(
      jobs_.begin(), jobs_.end(), [&](const auto& entry) { return entry.second.status == status; }));
}

std::size_t JobTable::running() const { return count("running"); }

}  // namespace kforge::serve
