#include "runner/environment_probe.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>
#include <vector>

#include "runner/environment_variable.hpp"
#include "store/content_hash.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, for posix_spawn

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

std::string run_and_capture(const std::vector<std::string>& argv) {
  std::array<int, 2> pipe_fds{};
  if (pipe2(pipe_fds.data(), O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  }
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv.front().c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    throw std::runtime_error("cannot run " + argv.front() + ": " + std::strerror(spawned));
  }
  std::string output;
  std::array<char, 4096> buffer{};
  for (ssize_t got = 0; (got = read(pipe_fds[0], buffer.data(), buffer.size())) != 0;) {
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      break;
    }
    output.append(buffer.data(), static_cast<std::size_t>(got));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(argv.front() + " could not report its package versions");
  }
  return output;
}

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

EnvironmentFacts probe_environment(const PythonEnvironment& python, const std::string& device_request) {
  auto versions = nlohmann::json::parse(
      run_and_capture({python.interpreter.string(), "-I", "-c", kVersionScript}), nullptr, false);
  if (!versions.is_object()) {
    throw std::runtime_error(python.interpreter.string() + " printed no package versions");
  }
  versions["engine"] = engine_identity(python);
  return {gpu_for(device_request), versions};
}

}  // namespace kforge::runner
