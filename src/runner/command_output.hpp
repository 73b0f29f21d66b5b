#pragma once

#include <string>
#include <vector>

namespace kforge::runner {

// What a short helper command printed and how it ended.
struct CommandOutput {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;     // standard output
  std::string err;     // standard error (the last 64 KiB)
  // `out` when the command exited 0; otherwise std::runtime_error naming it with its stderr.
  const std::string& checked_output() const;
  std::string command;
};

// Runs argv (argv[0] a path; not searched on PATH) with kforge's environment, waits for it, and
// returns what it printed. Throws std::runtime_error when it cannot start. For short helpers only
// (version probes, format converters): there is no time limit or sandbox.
CommandOutput run_command(const std::vector<std::string>& argv);

}  // namespace kforge::runner
