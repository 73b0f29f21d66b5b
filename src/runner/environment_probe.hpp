#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "runner/python_environment.hpp"

namespace kforge::runner {

// What the result store keys a verdict by, found in well under a second and without importing torch:
// the GPU model a device request lands on, the Python/torch/triton versions of the interpreter, and the
// identity of this kforge build (its binary and its Python workers).
struct EnvironmentFacts {
  std::string gpu;          // e.g. "NVIDIA H100 80GB HBM3", or "cpu"
  nlohmann::json versions;  // {"python", "torch", "triton", "engine"}
};

// Throws std::runtime_error when the interpreter cannot be run.
EnvironmentFacts probe_environment(const PythonEnvironment& python, const std::string& device_request);

// The GPU model names the NVIDIA driver lists in /proc (empty without a driver).
std::vector<std::string> installed_gpu_models();

// Why `request` is not a device kforge understands ("" when it is: auto, cpu, cuda or cuda:N), so that a
// typo is refused before any worker starts.
std::string device_request_problem(const std::string& request);

// Where "auto" lands without starting Python: "cuda:0" when the driver lists a GPU that
// CUDA_VISIBLE_DEVICES does not hide, else "cpu"; any other request unchanged.
std::string resolve_device(const std::string& request);

}  // namespace kforge::runner
