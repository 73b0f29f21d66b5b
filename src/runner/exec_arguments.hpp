#pragma once

#include <string>
#include <vector>

#include "runner/worker_process.hpp"

namespace kforge::runner {

// One "NAME=value" entry of an environment block.
std::string environment_entry(const std::string& name, const std::string& value);

// The argv and envp of an execve of `launch` (its executable, arguments and whole environment), built
// before a fork: a child forked from a process with threads may make only async-signal-safe calls, so
// nothing may be allocated after the fork. The arrays point into this object's own strings: it is
// neither copied nor moved.
class ExecArguments {
 public:
  explicit ExecArguments(const WorkerLaunch& launch);
  ExecArguments(const ExecArguments&) = delete;
  ExecArguments& operator=(const ExecArguments&) = delete;
  ExecArguments(ExecArguments&&) = delete;
  ExecArguments& operator=(ExecArguments&&) = delete;
  ~ExecArguments() = default;

  char* const* argv() const { return argv_.data(); }
  char* const* envp() const { return envp_.data(); }

 private:
  std::vector<std::string> argument_storage_;
  std::vector<std::string> environment_storage_;
  std::vector<char*> argv_;  // null-terminated, into argument_storage_
  std::vector<char*> envp_;  // null-terminated, into environment_storage_
};

}  // namespace kforge::runner
