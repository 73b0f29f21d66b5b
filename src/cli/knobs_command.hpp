#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kforge::cli {

// Registers `kforge knobs` on app: lists the knobs the tuner finds in a candidate (launch sizes, warps,
// stages, autotune configs, program order) with their choices, and with --set writes the candidate
// with chosen values, as the tuner would. The callable gives the exit code, or -1 when another
// subcommand was chosen.
std::function<int()> add_knobs_command(CLI::App& app);

}  // namespace kforge::cli
