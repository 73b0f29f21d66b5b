#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kforge::cli {

// Registers `kforge optimize` on app: the built-in tuner over a candidate's knobs, every proposal
// verified by the verdict pipeline, guided by the profile (docs/optimize.md). The callable gives the
// exit code, or -1 when another subcommand was chosen.
std::function<int()> add_optimize_command(CLI::App& app);

}  // namespace kforge::cli
