#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "optimize/knob_tuner.hpp"
#include "optimize/tunable_knobs.hpp"

namespace kforge::optimize {

// Everything one optimization run produced.
struct OptimizeRun {
  std::string problem;
  std::string from;
  nlohmann::json device;
  std::vector<std::string> proposers;  // in the order they ran
  KnobSearch search;                   // the knobs the tuner searched (empty when it did not run)
  SearchOutcome outcome;
  nlohmann::json profile_before;  // kforge profile's body for the start, or null
  nlohmann::json profile_after;   // for the best, or null
};

// The report (schema kforge.optimize/1): knobs with their start and best values, speedup per round,
// the roofline position before and after, and every attempt with its proposer, what it changed and its
// verdict summary. An LLM attempt's source is not in it: `attempt_file_names` names its file.
nlohmann::json optimize_report(const OptimizeRun& run);

// For each attempt, the file (relative to the report) that holds its source: attempts/round-R-K.py, K
// counting the attempts of round R from 1; "" for an attempt without a source (the tuner's).
std::vector<std::string> attempt_file_names(const SearchOutcome& outcome);

// One line for the terminal as an attempt's verdict comes in: its round, proposer, what it changes (the
// knobs that differ from their start values, or the LLM's idea), its verdict and time when timed.
std::string render_attempt_line(const SearchAttempt& attempt, const std::vector<Knob>& knobs);

// A few lines for the terminal.
std::string render_report_text(const nlohmann::json& report);

// A self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched).
std::string render_report_html(const nlohmann::json& report);

}  // namespace kforge::optimize
