#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kforge::cli {

// Registers `kforge serve` on app: the reward service (docs/api.md). The callable runs it until
// SIGTERM/SIGINT (then drains) and gives the exit code, or -1 when another subcommand was chosen.
std::function<int()> add_serve_command(CLI::App& app);

}  // namespace kforge::cli
