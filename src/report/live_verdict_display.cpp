#include "report/live_verdict_display.hpp"

#include <fmt/format.h>

#include "report/terminal_report.hpp"

namespace kforge::report {
namespace {

constexpr auto kRedrawInterval = std::chrono::seconds(1);
constexpr auto kMinRedrawInterval = std::chrono::milliseconds(200);

}  // namespace

LiveVerdictDisplay::LiveVerdictDisplay(std::ostream& out, bool terminal) : out_(out), terminal_(terminal) {
  if (terminal_) {
    ticker_ = std::thread([this] { tick(); });
  }
}

LiveVerdictDisplay::~LiveVerdictDisplay() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    clear_progress_line();
  }
  wake_.notify_all();
  if (ticker_.joinable()) {
    ticker_.join();
  }
}

void LiveVerdictDisplay::start(const std::string& problem, const std::string& candidate,
                               const std::vector<std::string>& notes) {
  const std::lock_guard lock(mutex_);
  out_ << render_header(problem, candidate);
  for (const auto& note : notes) {
    out_ << note << "\n";
  }
  out_ << std::flush;
}

void LiveVerdictDisplay::device_ready(const nlohmann::json& device) {
  const std::lock_guard lock(mutex_);
  clear_progress_line();
  out_ << render_device(device);
  draw_progress_line();
  out_ << std::flush;
}

void LiveVerdictDisplay::stage_finished(const verify::StageResult& stage) {
  const std::lock_guard lock(mutex_);
  clear_progress_line();
  const auto name = verify::to_string(stage.name);
  shown_.insert(name);
  if (progress_stage_ == name) {
    progress_stage_.clear();
    progress_text_.clear();
  }
  out_ << render_stage(verify::to_json(stage), terminal_) << std::flush;
}

void LiveVerdictDisplay::progress(verify::StageName stage, const std::string& text) {
  const std::lock_guard lock(mutex_);
  const auto name = verify::to_string(stage);
  const auto now = std::chrono::steady_clock::now();
  const bool new_stage = name != progress_stage_;
  if (new_stage || text != progress_text_) {
    progress_since_ = now;
  }
  progress_stage_ = name;
  progress_text_ = text;
  // Timing rounds come every few milliseconds: redraw at most a few times a second (the ticker keeps up).
  if (new_stage || !progress_drawn_ || now - last_draw_ >= kMinRedrawInterval) {
    clear_progress_line();
    draw_progress_line();
    out_ << std::flush;
  }
}

void LiveVerdictDisplay::finish(const nlohmann::json& verdict) {
  const std::lock_guard lock(mutex_);
  clear_progress_line();
  progress_stage_.clear();
  progress_text_.clear();
  if (!shown_.empty()) {  // an evaluation that never started shows no stage table
    for (const auto& stage : verdict.value("stages", nlohmann::json::array())) {
      if (!shown_.contains(stage.value("name", ""))) {
        out_ << render_stage(stage, terminal_);
      }
    }
  }
  out_ << render_outcome(verdict, terminal_) << std::flush;
}

void LiveVerdictDisplay::clear_progress_line() {
  if (progress_drawn_) {
    out_ << "\r\033[K";
    progress_drawn_ = false;
  }
}

void LiveVerdictDisplay::draw_progress_line() {
  if (!terminal_ || progress_text_.empty()) {
    return;
  }
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - progress_since_);
  out_ << fmt::format("  \033[2m.... {:<12} {} · {} s\033[0m", progress_stage_, progress_text_,
                      seconds.count());
  progress_drawn_ = true;
  last_draw_ = std::chrono::steady_clock::now();
}

void LiveVerdictDisplay::tick() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kRedrawInterval);
    if (!stopping_ && progress_drawn_) {
      clear_progress_line();
      draw_progress_line();
      out_ << std::flush;
    }
  }
}

}  // namespace kforge::report
