#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kforge::report {

// The human-readable verdict from its JSON document (docs/verdict.md), fresh or from the result store:
// one line per stage, then the failing stage's evidence (findings, error, trimmed traceback,
// per-output errors), then the outcome.
std::string render_terminal(const nlohmann::json& verdict, bool color);

// Its parts, for output that appears as the evaluation runs (live_verdict_display.hpp):
std::string render_header(const std::string& problem, const std::string& candidate);
std::string render_device(const nlohmann::json& device);                // "" for no device
std::string render_stage(const nlohmann::json& stage, bool color);      // its line, and evidence if it failed
std::string render_outcome(const nlohmann::json& verdict, bool color);  // ACCEPTED/REJECTED/ERROR line

}  // namespace kforge::report
