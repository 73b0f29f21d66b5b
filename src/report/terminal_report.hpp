#pragma once

#include <string>

#include "verify/verdict.hpp"

namespace kforge::report {

// The human-readable verdict: one line per stage, then the failing stage's evidence
// (findings, error, trimmed traceback, per-output errors), then the outcome.
std::string render_terminal(const verify::Verdict& verdict, bool color);

}  // namespace kforge::report
