#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kforge::cli {

// `kforge data sft`: verified SFT data from a teacher (docs/training.md). The returned function runs it
// when it was the subcommand given and returns its exit code, else -1.
std::function<int()> add_sft_subcommand(CLI::App& data);

}  // namespace kforge::cli
