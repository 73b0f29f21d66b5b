#include "runner/worker_launch.hpp"

#include <array>
#include <cstdlib>
#include <string_view>

namespace kforge::runner {
namespace {

// Variables a worker needs from the user's environment; everything else is dropped.
constexpr std::array kPassedThrough{"PATH",
                                    "HOME",
                                    "LANG",
                                    "LC_ALL",
                                    "LD_LIBRARY_PATH",
                                    "CUDA_VISIBLE_DEVICES",
                                    "CUDA_HOME",
                                    "TRITON_PTXAS_PATH",
                                    "TRITON_LIBCUDA_PATH",
                                    "USER"};

}  // namespace

WorkerLaunch make_worker_launch(WorkerRole role, const PythonEnvironment& python,
                                const std::filesystem::path& scratch, bool cpu_device) {
  const std::string name = role == WorkerRole::judge ? "judge" : "candidate";
  const auto private_dir = scratch / name;
  std::filesystem::create_directories(private_dir / "triton-cache");
  WorkerLaunch launch;
  launch.executable = python.interpreter;
  launch.arguments = {"-X", "faulthandler", "-m", "kforge.worker." + name};
  launch.working_directory = private_dir;
  for (const std::string_view variable : kPassedThrough) {
    if (cpu_device && variable == "CUDA_VISIBLE_DEVICES") {
      continue;  // set empty below: a CPU run must not touch a GPU
    }
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read before worker threads exist
    if (const char* value = std::getenv(std::string(variable).c_str()); value != nullptr) {
      launch.environment.emplace_back(variable, value);
    }
  }
  launch.environment.emplace_back("PYTHONPATH", python.package_root.string());
  launch.environment.emplace_back("PYTHONUNBUFFERED", "1");
  launch.environment.emplace_back("PYTHONDONTWRITEBYTECODE", "1");
  launch.environment.emplace_back("TMPDIR", private_dir.string());
  launch.environment.emplace_back("TRITON_CACHE_DIR", (private_dir / "triton-cache").string());
  if (cpu_device) {
    launch.environment.emplace_back("TRITON_INTERPRET", "1");
    launch.environment.emplace_back("CUDA_VISIBLE_DEVICES", "");
  }
  return launch;
}

}  // namespace kforge::runner
