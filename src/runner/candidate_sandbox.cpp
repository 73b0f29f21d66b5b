#include "runner/candidate_sandbox.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include "runner/environment_variable.hpp"

namespace kforge::runner {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
// Virtual reservations (thread stacks, malloc arenas) are not memory: RLIMIT_AS leaves room for them.
constexpr std::uint64_t kAddressSpaceSlack = 16 * kGiB;
constexpr std::uint64_t kOpenFiles = 1024;
constexpr double kCpuCallsBudget = 10.0;  // enough CPU for ten calls running to their timeout on every core
constexpr double kMinCpuSeconds = 600.0;
constexpr std::uint64_t kMinProcesses = 1024;  // threads count: torch starts one per core, CUDA a few more

// Read-only system trees: libraries, the compilers Triton runs (ptxas, cc), configuration, /proc and /sys.
constexpr std::array kSystemTrees{"/usr",  "/lib", "/lib32", "/lib64", "/libx32", "/bin",
                                  "/sbin", "/etc", "/opt",   "/proc",  "/sys"};
constexpr std::array kDeviceFiles{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};

// Never the root itself: a rule on / would open every file.
void add_path(std::vector<fs::path>& paths, const fs::path& path) {
  if (path.empty() || !path.is_absolute() || path == path.root_path()) {
    return;
  }
  if (std::find(paths.begin(), paths.end(), path) == paths.end()) {
    paths.push_back(path);
  }
}

void add_path_list(std::vector<fs::path>& paths, const std::string& list) {
  std::string_view rest = list;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    add_path(paths, fs::path(rest.substr(0, colon)));
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
  }
}

// The venv (bin/python's parent holding pyvenv.cfg), the installation its `home` names, and the prefix of
// the real interpreter binary: together, the standard library and every site-packages the worker imports.
void add_python_installation(std::vector<fs::path>& paths, const fs::path& interpreter) {
  std::error_code error;
  const fs::path venv = fs::absolute(interpreter, error).parent_path().parent_path();
  std::ifstream config(venv / "pyvenv.cfg");
  if (config) {
    add_path(paths, venv);
    for (std::string line; std::getline(config, line);) {
      if (line.starts_with("home")) {
        const auto equals = line.find('=');
        if (equals != std::string::npos) {
          std::string home = line.substr(equals + 1);
          home.erase(0, home.find_first_not_of(" \t"));
          home.erase(home.find_last_not_of(" \t\r") + 1);
          add_path(paths, fs::weakly_canonical(fs::path(home), error).parent_path());
        }
      }
    }
  }
  const fs::path real = fs::canonical(interpreter, error);
  if (!error) {
    add_path(paths, real.parent_path().parent_path());
  }
}

void add_gpu_device_files(std::vector<fs::path>& paths) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/dev", error)) {
    if (entry.path().filename().string().starts_with(
            "nvidia")) {  // nvidiactl, nvidia0, nvidia-uvm, nvidia-caps
      add_path(paths, entry.path());
    }
  }
}

unsigned cpu_count() { return std::max(1U, std::thread::hardware_concurrency()); }

}  // namespace

SandboxPolicy make_candidate_sandbox_policy(const PythonEnvironment& python, const fs::path& private_dir,
                                            const fs::path& code_dir, bool cpu_device,
                                            const CandidateSandboxContext& context) {
  SandboxPolicy policy;
  policy.mode = sandbox_mode_from_environment();
  policy.disabled_layers = disabled_layers_from_environment();

  for (const char* tree : kSystemTrees) {
    add_path(policy.read_only_paths, tree);
  }
  add_python_installation(policy.read_only_paths, python.interpreter);
  add_path(policy.read_only_paths, fs::absolute(python.package_root));
  add_path(policy.read_only_paths, fs::absolute(code_dir));
  add_path_list(policy.read_only_paths, environment_variable("LD_LIBRARY_PATH"));
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH", "TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH"}) {
    add_path(policy.read_only_paths, environment_variable(variable));
  }

  add_path(policy.read_write_paths, fs::absolute(private_dir));
  if (!context.transfer_dir.empty()) {
    add_path(policy.read_write_paths, fs::absolute(context.transfer_dir));
  }
  for (const char* device : kDeviceFiles) {
    add_path(policy.read_write_paths, device);
  }
  if (!cpu_device) {
    add_path(policy.read_write_paths, "/dev/shm");  // CUDA's own IPC bookkeeping
    add_gpu_device_files(policy.read_write_paths);
  }

  for (const auto& secret : context.secret_paths) {
    std::error_code error;
    policy.must_stay_unreadable.push_back(fs::absolute(secret, error));
  }
  policy.protected_pids = context.protected_pids;

  const std::uint64_t memory = memory_limit_from_environment();
  const double cpu_seconds =
      std::max(kMinCpuSeconds, kCpuCallsBudget * context.call_timeout_s) * static_cast<double>(cpu_count());
  policy.budget.resident_bytes = memory;
  policy.budget.address_space_bytes = cpu_device ? memory + kAddressSpaceSlack : 0;
  policy.budget.file_size_bytes = memory;
  policy.budget.open_files = kOpenFiles;
  policy.budget.cpu_seconds = static_cast<std::uint64_t>(std::ceil(cpu_seconds));
  policy.budget.processes = std::max<std::uint64_t>(kMinProcesses, std::uint64_t{8} * cpu_count());
  return policy;
}

}  // namespace kforge::runner
