#include "runner/environment_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>
#include <vector>

#include "runner/command_output.hpp"
#include "runner/environment_variable.hpp"
#include "store/content_hash.hpp"

namespace kforge::runner {
namespace {

namespace fs = std::filesystem;

// importlib.metadata reads the installed versions without importing torch (which takes seconds).
constexpr const char* kVersionScript =
    "import importlib.metadata as m, json, platform\n"
    "def v(name):\n"
    "    try:\n"
    "        return m.version(name)\n"
    "    except m.PackageNotFoundError:\n"
    "        return None\n"
    "print(json.dumps({'python': platform.python_version(), 'torch': v('torch'), 'triton': v('triton')}))\n";

std::string engine_identity(const PythonEnvironment& python) {
  std::vector<fs::path> files{"/proc/self/exe"};
  std::vector<fs::path> workers;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(python.package_root / "kforge" / "worker", error)) {
    if (entry.path().extension() == ".py") {
      workers.push_back(entry.path());
    }
  }
  std::sort(workers.begin(), workers.end());
  files.insert(files.end(), workers.begin(), workers.end());
  return store::sha256_of_files(files).substr(0, 16);
}

std::string gpu_for(const std::string& device_request) {
  if (device_request == "cpu") {
    return "cpu";
  }
  const auto models = installed_gpu_models();
  if (models.empty() || cuda_hidden_by_environment()) {
    return device_request == "auto" ? "cpu" : "no GPU";
  }
  const std::set<std::string> distinct(models.begin(), models.end());
  if (distinct.size() == 1) {
    return *distinct.begin();
  }
  std::string joined = "mixed:";
  for (const auto& model : distinct) {
    joined += model + "|";
  }
  return joined;
}

}  // namespace

std::vector<std::string> installed_gpu_models() {
  std::vector<std::string> models;
  std::error_code error;
  for (const auto& gpu : fs::directory_iterator("/proc/driver/nvidia/gpus", error)) {
    std::ifstream information(gpu.path() / "information");
    for (std::string line; std::getline(information, line);) {
      if (line.starts_with("Model:")) {
        const auto start = line.find_first_not_of(" \t", 6);
        models.push_back(start == std::string::npos ? "unknown" : line.substr(start));
      }
    }
  }
  return models;
}

std::string device_request_problem(const std::string& request) {
  if (request == "auto" || request == "cpu" || request == "cuda") {
    return "";
  }
  constexpr std::string_view prefix = "cuda:";
  const auto index = request.substr(std::min(request.size(), prefix.size()));
  if (request.rfind(prefix, 0) == 0 && !index.empty() && index.size() <= 4 &&
      index.find_first_not_of("0123456789") == std::string::npos) {
    return "";
  }
  return fmt::format(
      "unknown device '{}': expected auto (a GPU if there is one, else the CPU), cpu, or "
      "cuda:N (N: the GPU's index, e.g. cuda:0)",
      request);
}

std::string resolve_device(const std::string& request) {
  if (request != "auto") {
    return request;
  }
  return installed_gpu_models().empty() || cuda_hidden_by_environment() ? "cpu" : "cuda:0";
}

EnvironmentFacts probe_environment(const PythonEnvironment& python, const std::string& device_request) {
  auto versions = nlohmann::json::parse(
      run_command({python.interpreter.string(), "-I", "-c", kVersionScript}).checked_output(), nullptr,
      false);
  if (!versions.is_object()) {
    throw std::runtime_error(python.interpreter.string() + " printed no package versions");
  }
  versions["engine"] = engine_identity(python);
  return {gpu_for(device_request), versions};
}

}  // namespace kforge::runner
