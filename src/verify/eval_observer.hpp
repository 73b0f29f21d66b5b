#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "verify/verdict.hpp"

namespace kforge::verify {

// What one evaluation tells its caller while it runs, so that a person watching sees each stage as it
// finishes and what a long stage is doing (kforge eval's live output). Called on the evaluating thread.
class EvalObserver {
 public:
  EvalObserver() = default;
  EvalObserver(const EvalObserver&) = delete;
  EvalObserver& operator=(const EvalObserver&) = delete;
  EvalObserver(EvalObserver&&) = delete;
  EvalObserver& operator=(EvalObserver&&) = delete;
  virtual ~EvalObserver() = default;

  // The judge runs: the device the evaluation is on (the verdict's "device").
  virtual void device_ready(const nlohmann::json& device) = 0;
  // A stage passed, failed or was skipped (stages never reached are not reported).
  virtual void stage_finished(const StageResult& stage) = 0;
  // What `stage` is doing now, e.g. "trial 2/5" or "loading the problem".
  virtual void progress(StageName stage, const std::string& text) = 0;
};

}  // namespace kforge::verify
