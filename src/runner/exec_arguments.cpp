#include "runner/exec_arguments.hpp"

namespace kforge::runner {

std::string environment_entry(const std::string& name, const std::string& value) {
  std::string entry = name;
  entry.append("=").append(value);
  return entry;
}

ExecArguments::ExecArguments(const WorkerLaunch& launch) {
  argument_storage_.reserve(launch.arguments.size() + 1);
  argument_storage_.push_back(launch.executable.string());
  argument_storage_.insert(argument_storage_.end(), launch.arguments.begin(), launch.arguments.end());
  environment_storage_.reserve(launch.environment.size());
  for (const auto& [name, value] : launch.environment) {
    environment_storage_.push_back(environment_entry(name, value));
  }
  argv_.reserve(argument_storage_.size() + 1);
  for (auto& argument : argument_storage_) {
    argv_.push_back(argument.data());
  }
  argv_.push_back(nullptr);
  envp_.reserve(environment_storage_.size() + 1);
  for (auto& entry : environment_storage_) {
    envp_.push_back(entry.data());
  }
  envp_.push_back(nullptr);
}

}  // namespace kforge::runner
