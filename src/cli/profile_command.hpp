#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kforge::cli {

// Registers `kforge profile` on app: the verdict, then Nsight Compute, Triton's compiled-kernel facts
// and the roofline for an accepted candidate (docs/profile.md). The callable gives the exit code, or
// -1 when another subcommand was chosen.
std::function<int()> add_profile_command(CLI::App& app);

}  // namespace kforge::cli
