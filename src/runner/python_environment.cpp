#include "runner/python_environment.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "runner/environment_variable.hpp"

namespace kforge::runner {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> env_value(const char* name) {
  auto value = environment_variable(name);
  return value.empty() ? std::nullopt : std::optional<std::string>(std::move(value));
}

bool holds_workers(const fs::path& root) {
  std::error_code error;
  return fs::is_regular_file(root / "kforge" / "worker" / "judge.py", error);
}

std::optional<fs::path> find_package_root() {
  if (auto configured = env_value("KFORGE_PYTHONPATH")) {
    return fs::path(*configured);
  }
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (error) {
    return std::nullopt;
  }
  for (fs::path dir = executable.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    for (const fs::path& candidate : {dir / "python", dir / "share" / "kforge" / "python"}) {
      if (holds_workers(candidate)) {
        return candidate;
      }
    }
    if (dir == dir.root_path()) {
      break;
    }
  }
  return std::nullopt;
}

std::optional<fs::path> find_on_path(std::string_view name) {
  const auto path = env_value("PATH");
  if (!path) {
    return std::nullopt;
  }
  std::string_view rest = *path;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const fs::path candidate = fs::path(rest.substr(0, colon)) / name;
    if (access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
  }
  return std::nullopt;
}

// A bare name such as "python3" is looked up on PATH, as a shell would; a relative path is made
// absolute (workers start in folders of their own, where it would name nothing). Symlinks are kept:
// a venv's python finds its packages through the link's own path.
fs::path resolve_command(const fs::path& command) {
  if (command.has_parent_path()) {
    std::error_code error;
    auto absolute = fs::absolute(command, error);
    return error ? command : absolute;
  }
  return find_on_path(command.string()).value_or(command);
}

fs::path find_interpreter(const std::optional<fs::path>& explicit_interpreter, const fs::path& package_root) {
  if (explicit_interpreter) {
    return resolve_command(*explicit_interpreter);
  }
  if (auto configured = env_value("KFORGE_PYTHON")) {
    return resolve_command(fs::path(*configured));
  }
  fs::path venv_python = package_root.parent_path() / ".venv" / "bin" / "python";
  if (access(venv_python.c_str(), X_OK) == 0) {
    return venv_python;
  }
  if (auto on_path = find_on_path("python3")) {
    return *on_path;
  }
  throw std::runtime_error(
      "no Python interpreter found: pass --python PATH or set KFORGE_PYTHON to a python with torch and "
      "triton");
}

}  // namespace

PythonEnvironment find_python_environment(const std::optional<fs::path>& explicit_interpreter) {
  const auto package_root = find_package_root();
  if (!package_root || !holds_workers(*package_root)) {
    throw std::runtime_error(
        "cannot find kforge's Python workers (kforge/worker/judge.py): set KFORGE_PYTHONPATH to the "
        "repository's python/ folder");
  }
  PythonEnvironment environment{find_interpreter(explicit_interpreter, *package_root), *package_root};
  if (access(environment.interpreter.c_str(), X_OK) != 0) {
    throw std::runtime_error(
        fmt::format("the Python interpreter {} is not executable", environment.interpreter.string()));
  }
  return environment;
}

}  // namespace kforge::runner
