#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kforge::runner {

// Where the worker runtimes live and which interpreter runs them.
struct PythonEnvironment {
  std::filesystem::path interpreter;   // e.g. <repo>/.venv/bin/python
  std::filesystem::path package_root;  // the folder holding kforge/worker/
};

// Resolution order: explicit --python, $KFORGE_PYTHON, a .venv beside the package root, python3 on PATH.
// The package root: $KFORGE_PYTHONPATH, or python/ found upward from the kforge binary, or
// <prefix>/share/kforge/python. Throws std::runtime_error saying what to set when nothing is found.
PythonEnvironment find_python_environment(const std::optional<std::filesystem::path>& explicit_interpreter);

}  // namespace kforge::runner
