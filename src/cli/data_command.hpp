#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kforge::cli {

// Registers `kforge data prompts`: writes the RL prompt dataset of a suite (JSONL or Parquet) in the
// shape TRL and verl load (docs/training.md). The callable gives the exit code (0 written, 2 usage
// error or a file that cannot be written).
std::function<int()> add_data_command(CLI::App& app);

}  // namespace kforge::cli
