#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kforge::cli {

// Registers `kforge eval` on app; the returned callable runs it and gives the exit code
// (0 accepted, 1 rejected, 2 usage or environment error).
std::function<int()> add_eval_command(CLI::App& app);

}  // namespace kforge::cli
