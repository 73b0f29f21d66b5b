#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "verify/eval_observer.hpp"

namespace kforge::report {

// kforge eval's output while it runs: the header at once, each stage's line as the stage finishes, and on
// a terminal a progress line redrawn every second under them (what the stage does now, seconds so far),
// so that a slow run never looks hung. The lines are those of render_terminal.
class LiveVerdictDisplay final : public verify::EvalObserver {
 public:
  LiveVerdictDisplay(std::ostream& out, bool terminal);
  LiveVerdictDisplay(const LiveVerdictDisplay&) = delete;
  LiveVerdictDisplay& operator=(const LiveVerdictDisplay&) = delete;
  LiveVerdictDisplay(LiveVerdictDisplay&&) = delete;
  LiveVerdictDisplay& operator=(LiveVerdictDisplay&&) = delete;
  ~LiveVerdictDisplay() override;

  // The header: problem, candidate and notes (e.g. which sizes run), printed at once.
  void start(const std::string& problem, const std::string& candidate, const std::vector<std::string>& notes);
  void device_ready(const nlohmann::json& device) override;
  void stage_finished(const verify::StageResult& stage) override;
  void progress(verify::StageName stage, const std::string& text) override;
  // The end: the stages not shown yet (those never reached) and the outcome line.
  void finish(const nlohmann::json& verdict);

 private:
  void clear_progress_line();  // with mutex_ held
  void draw_progress_line();   // with mutex_ held
  void tick();

  std::ostream& out_;
  bool terminal_;
  std::set<std::string> shown_;  // stages already printed
  std::string progress_stage_;
  std::string progress_text_;
  std::chrono::steady_clock::time_point progress_since_;
  std::chrono::steady_clock::time_point last_draw_;
  bool progress_drawn_ = false;
  bool stopping_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
};

}  // namespace kforge::report
