#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "optimize/knob_tuner.hpp"
#include "optimize/tunable_knobs.hpp"

namespace kforge::optimize {

// Everything one optimization run produced.
struct OptimizeRun {
  std::string problem;
  std::string from;
  nlohmann::json device;
  KnobSearch search;
  TunerOutcome outcome;
  nlohmann::json profile_before;  // kforge profile's body for the start, or null
  nlohmann::json profile_after;   // for the best, or null
};

// The report (schema kforge.optimize/1): knobs with their start and best values, speedup per round,
// the roofline position before and after, and every attempt with its verdict summary.
nlohmann::json optimize_report(const OptimizeRun& run);

// A few lines for the terminal.
std::string render_report_text(const nlohmann::json& report);

// A self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched).
std::string render_report_html(const nlohmann::json& report);

}  // namespace kforge::optimize
