#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "runner/worker_process.hpp"

namespace kforge::verify {

// One worker call's result, whichever way it ended: a reply, an error the worker reported, or the
// process failing (timeout, crash, exit, protocol).
struct CallResult {
  bool ok = false;
  nlohmann::json body;  // the reply when ok; the worker's error object otherwise
  std::string kind;     // error kind: the worker's own, or timeout | crashed | exited | protocol
  std::string message;
  bool process_lost = false;  // the worker is gone and must not be called again

  nlohmann::json to_details(const std::string& log_tail) const;
};

CallResult call_worker(runner::WorkerProcess& worker, const nlohmann::json& request,
                       const runner::CallLimit& limit);

// The lines of a captured worker log that point into the candidate's source (faulthandler dumps),
// with the last lines of the log for context.
std::string trim_log(const std::string& log_tail, const std::string& candidate_path);

}  // namespace kforge::verify
