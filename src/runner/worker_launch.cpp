#include "runner/worker_launch.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

namespace kforge::runner {
namespace {

constexpr const char* kCandidateFolder = "candidate";
constexpr const char* kTritonCacheFolder = "triton-cache";

// A CPU run's workers compute with one thread each: PyTorch's OpenMP pool and numpy's OpenBLAS pool
// otherwise start a thread per core in every worker, which oversubscribes a batch's cores and spin-waits
// between the Triton interpreter's many small operations (the starter suite on two cores: 46 s, 29-35 s
// with these).
constexpr std::array kCpuThreadPools{"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"};

// Variables the judge needs from the user's environment; everything else is dropped.
constexpr std::array kJudgePassedThrough{"PATH",
                                         "HOME",
                                         "LANG",
                                         "LC_ALL",
                                         "LD_LIBRARY_PATH",
                                         "CUDA_VISIBLE_DEVICES",
                                         "CUDA_HOME",
                                         "TRITON_PTXAS_PATH",
                                         "TRITON_LIBCUDA_PATH",
                                         "NCCL_NVLS_ENABLE",
                                         "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                         "NVSHMEM_DISABLE_NVLS",
                                         "KFORGE_TIMING_PLACEMENTS",
                                         "KFORGE_TIMING_FLUSH",
                                         "KFORGE_TIMING_STREAM",
                                         "USER"};

// The candidate gets less: no HOME, USER or locale of the user, only what finds libraries and tools, and
// the KFORGE_TIMING_* switches (not secrets), so both sides time alike.
constexpr std::array kCandidatePassedThrough{"PATH",
                                             "LD_LIBRARY_PATH",
                                             "CUDA_VISIBLE_DEVICES",
                                             "CUDA_HOME",
                                             "CC",
                                             "TRITON_PTXAS_PATH",
                                             "TRITON_LIBCUDA_PATH",
                                             "NCCL_NVLS_ENABLE",
                                             "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                             "NVSHMEM_DISABLE_NVLS",
                                             "KFORGE_TIMING_PLACEMENTS",
                                             "KFORGE_TIMING_FLUSH",
                                             "KFORGE_TIMING_STREAM"};

template <std::size_t N>
void pass_through(WorkerLaunch& launch, const std::array<const char*, N>& names, bool cpu_device) {
  for (const std::string_view variable : names) {
    if (cpu_device && variable == "CUDA_VISIBLE_DEVICES") {
      continue;  // set empty below: a CPU run must not touch a GPU
    }
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read before worker threads exist
    if (const char* value = std::getenv(std::string(variable).c_str()); value != nullptr) {
      launch.environment.emplace_back(variable, value);
    }
  }
}

WorkerLaunch python_worker(const std::string& name, const PythonEnvironment& python,
                           const std::filesystem::path& private_dir) {
  std::filesystem::create_directories(private_dir / kTritonCacheFolder);
  WorkerLaunch launch;
  launch.executable = python.interpreter;
  launch.arguments = {"-X", "faulthandler", "-m", "kforge.worker." + name};
  launch.working_directory = private_dir;
  return launch;
}

void add_worker_variables(WorkerLaunch& launch, const PythonEnvironment& python,
                          const std::filesystem::path& private_dir, bool cpu_device) {
  launch.environment.emplace_back("PYTHONPATH", python.package_root.string());
  launch.environment.emplace_back("PYTHONUNBUFFERED", "1");
  launch.environment.emplace_back("PYTHONDONTWRITEBYTECODE", "1");
  launch.environment.emplace_back("TMPDIR", private_dir.string());
  launch.environment.emplace_back("TRITON_CACHE_DIR", (private_dir / kTritonCacheFolder).string());
  // kineto finalises CUPTI after each torch.profiler session (the candidate's traced trials): left
  // attached, it slowed every later launch of the process by ~25 µs (issue 31)
  launch.environment.emplace_back("TEARDOWN_CUPTI", "1");
  if (cpu_device) {
    set_visible_gpus(launch, "");
  }
}

// The candidate's scrubbed environment and sandbox for untrusted code in `private_dir`, reading
// `readable_code` (the candidate's code folder, or a client's problem folder).
void sandbox_untrusted(WorkerLaunch& launch, const PythonEnvironment& python,
                       const std::filesystem::path& private_dir, const std::filesystem::path& readable_code,
                       bool cpu_device, const CandidateSandboxContext& context) {
  pass_through(launch, kCandidatePassedThrough, cpu_device);
  launch.environment.emplace_back("HOME", private_dir.string());  // caches of CUDA, Triton, torch land here
  launch.environment.emplace_back("LANG", "C.UTF-8");
  launch.environment.emplace_back("PYTHONNOUSERSITE", "1");
  launch.environment.emplace_back("PYTHONSAFEPATH", "1");  // the working folder is not on sys.path
  add_worker_variables(launch, python, private_dir, cpu_device);
  launch.sandbox = make_candidate_sandbox_policy(python, private_dir, readable_code, cpu_device, context);
}

}  // namespace

std::filesystem::path candidate_compile_cache(const std::filesystem::path& scratch) {
  return scratch / kCandidateFolder / kTritonCacheFolder;
}

WorkerLaunch make_worker_launch(WorkerRole role, const PythonEnvironment& python,
                                const std::filesystem::path& scratch, bool cpu_device) {
  if (role == WorkerRole::candidate) {
    return make_candidate_launch(python, scratch, cpu_device, CandidateSandboxContext{{}, 300.0, {}, {}});
  }
  const auto private_dir = scratch / "judge";
  WorkerLaunch launch = python_worker("judge", python, private_dir);
  pass_through(launch, kJudgePassedThrough, cpu_device);
  add_worker_variables(launch, python, private_dir, cpu_device);
  return launch;
}

WorkerLaunch make_candidate_launch(const PythonEnvironment& python, const std::filesystem::path& scratch,
                                   bool cpu_device, const CandidateSandboxContext& context) {
  const auto private_dir = scratch / kCandidateFolder;
  WorkerLaunch launch = python_worker("candidate", python, private_dir);
  sandbox_untrusted(launch, python, private_dir, scratch / kCandidateCodeFolder, cpu_device, context);
  launch.hidden_reply_channel = true;  // candidate code runs in this process: replies are sealed
  return launch;
}

WorkerLaunch make_sandboxed_judge_launch(const PythonEnvironment& python,
                                         const std::filesystem::path& scratch, bool cpu_device,
                                         const std::filesystem::path& problem_folder,
                                         const std::filesystem::path& transfer_root, double call_timeout_s) {
  const auto private_dir = scratch / "judge";
  WorkerLaunch launch = python_worker("judge", python, private_dir);
  sandbox_untrusted(launch, python, private_dir, problem_folder, cpu_device,
                    CandidateSandboxContext{{}, call_timeout_s, {}, transfer_root});
  launch.hidden_reply_channel = true;  // the client's problem code runs in this process
  return launch;
}

WorkerLaunch make_sandboxed_program_launch(const std::string& module, const PythonEnvironment& python,
                                           const std::filesystem::path& scratch, bool cpu_device,
                                           const std::vector<std::string>& arguments,
                                           const CandidateSandboxContext& context) {
  const auto private_dir = scratch / module;
  WorkerLaunch launch = python_worker(module, python, private_dir);
  launch.arguments.insert(launch.arguments.end(), arguments.begin(), arguments.end());
  sandbox_untrusted(launch, python, private_dir, scratch / kCandidateCodeFolder, cpu_device, context);
  return launch;
}

void set_visible_gpus(WorkerLaunch& launch, const std::string& visible) {
  std::erase_if(launch.environment, [](const auto& pair) {
    return pair.first == "CUDA_VISIBLE_DEVICES" || pair.first == "TRITON_INTERPRET" ||
           std::ranges::find(kCpuThreadPools, pair.first) != kCpuThreadPools.end();
  });
  launch.environment.emplace_back("CUDA_VISIBLE_DEVICES", visible);
  if (visible.empty()) {
    launch.environment.emplace_back("TRITON_INTERPRET", "1");
    for (const char* pool : kCpuThreadPools) {
      launch.environment.emplace_back(pool, "1");
    }
  }
}

WorkerLaunch make_program_launch(const std::string& module, const PythonEnvironment& python,
                                 const std::filesystem::path& scratch,
                                 const std::vector<std::string>& wrapper,
                                 const std::vector<std::string>& arguments) {
  const auto private_dir = scratch / module;
  WorkerLaunch launch = python_worker(module, python, private_dir);
  launch.arguments.insert(launch.arguments.end(), arguments.begin(), arguments.end());
  if (!wrapper.empty()) {
    std::vector<std::string> wrapped(wrapper.begin() + 1, wrapper.end());
    wrapped.push_back(python.interpreter.string());
    wrapped.insert(wrapped.end(), launch.arguments.begin(), launch.arguments.end());
    launch.executable = wrapper.front();
    launch.arguments = std::move(wrapped);
  }
  pass_through(launch, kCandidatePassedThrough, false);
  launch.environment.emplace_back("HOME", private_dir.string());
  launch.environment.emplace_back("LANG", "C.UTF-8");
  launch.environment.emplace_back("PYTHONNOUSERSITE", "1");
  launch.environment.emplace_back("PYTHONSAFEPATH", "1");
  add_worker_variables(launch, python, private_dir, false);
  return launch;
}

}  // namespace kforge::runner
