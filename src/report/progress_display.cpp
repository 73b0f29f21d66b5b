#include "report/progress_display.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace kforge::report {
namespace {

constexpr std::size_t kBarWidth = 24;
constexpr auto kPlainInterval = std::chrono::seconds(30);

std::string duration_text(double seconds) {
  const auto whole = static_cast<long>(seconds);
  return whole >= 3600 ? fmt::format("{}h{:02}m", whole / 3600, (whole / 60) % 60)
                       : fmt::format("{}m{:02}s", whole / 60, whole % 60);
}

}  // namespace

ProgressDisplay::ProgressDisplay(std::ostream& out, std::size_t total, bool terminal)
    : out_(out), total_(total), terminal_(terminal) {}

std::string ProgressDisplay::line() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::size_t evaluated = done_ - stored_;
  const double rate = elapsed > 0.0 ? static_cast<double>(evaluated) / elapsed * 60.0 : 0.0;
  const double eta =
      evaluated > 0 ? elapsed / static_cast<double>(evaluated) * static_cast<double>(total_ - done_) : 0.0;
  const std::size_t filled = total_ == 0 ? kBarWidth : kBarWidth * done_ / total_;
  return fmt::format("[{}{}] {}/{} · accepted {} · rejected {} · error {} · stored {} · {:.1f}/min · ETA {}",
                     std::string(filled, '#'), std::string(kBarWidth - filled, '.'), done_, total_, accepted_,
                     rejected_, errors_, stored_, rate, evaluated > 0 ? duration_text(eta) : "?");
}

void ProgressDisplay::record(const std::string& outcome, bool from_store) {
  const std::lock_guard lock(mutex_);
  ++done_;
  accepted_ += outcome == "accepted" ? 1U : 0U;
  rejected_ += outcome == "rejected" ? 1U : 0U;
  errors_ += outcome != "accepted" && outcome != "rejected" ? 1U : 0U;
  stored_ += from_store ? 1U : 0U;
  if (terminal_) {
    out_ << "\r\033[K" << line() << std::flush;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  const std::size_t step = std::max<std::size_t>(1, total_ / 10);
  if (done_ == total_ || done_ - last_printed_ >= step || now - last_print_time_ >= kPlainInterval) {
    out_ << line() << "\n" << std::flush;
    last_printed_ = done_;
    last_print_time_ = now;
  }
}

void ProgressDisplay::finish() {
  const std::lock_guard lock(mutex_);
  if (terminal_) {
    out_ << "\r\033[K" << line() << "\n" << std::flush;
  }
}

}  // namespace kforge::report
