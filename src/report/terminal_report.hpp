#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kforge::report {

// The human-readable verdict from its JSON document (docs/verdict.md), fresh or from the result store:
// one line per stage, then the failing stage's evidence (findings, error, trimmed traceback,
// per-output errors), then the outcome.
std::string render_terminal(const nlohmann::json& verdict, bool color);

}  // namespace kforge::report
