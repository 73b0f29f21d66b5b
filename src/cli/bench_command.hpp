#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kforge::cli {

// Registers `kforge bench` on app: `--corpus DIR` runs a hostile/honest corpus and reports the
// detection and false-positive rates per class. The callable gives the exit code (0 every entry
// as expected, 1 a miss, a wrong path, a false alarm or an error, 2 usage error).
std::function<int()> add_bench_command(CLI::App& app);

}  // namespace kforge::cli
