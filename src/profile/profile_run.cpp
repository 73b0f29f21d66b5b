#include "profile/profile_run.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "runner/environment_variable.hpp"
#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/timing_lease.hpp"
#include "runner/worker_launch.hpp"
#include "runner/worker_process.hpp"
#include "source/text_file.hpp"
#include "store/result_store.hpp"

namespace kforge::profile {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::minutes kLeaseWaitLimit{10};
constexpr double kCeilingsTimeoutS = 300;

bool executable_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
}

// The last lines of a program's log that say what went wrong (ncu's ==ERROR== lines first).
std::string log_reason(const std::string& log) {
  std::istringstream lines(log);
  std::string line;
  std::string errors;
  while (std::getline(lines, line)) {
    if (line.rfind("==ERROR==", 0) == 0) {
      errors += (errors.empty() ? "" : " ") + line;
    }
  }
  if (!errors.empty()) {
    return errors;
  }
  const auto tail = log.size() > 600 ? log.substr(log.size() - 600) : log;
  return tail.empty() ? "no output" : tail;
}

struct TargetRun {
  std::optional<ProfilerOutput> output;
  std::string failure;  // why there is no output
};

TargetRun run_target(const runner::PythonEnvironment& python, const fs::path& scratch,
                     const std::vector<std::string>& wrapper, const ProfileRunSettings& settings) {
  const auto result = scratch / "profiler-result.json";
  fs::remove(result);
  std::vector<std::string> arguments{"--problem",   fs::absolute(settings.problem_path).string(),
                                     "--candidate", (scratch / "code" / "candidate.py").string(),
                                     "--device",    settings.device,
                                     "--seed",      std::to_string(settings.seed),
                                     "--out",       result.string()};
  if (settings.small) {
    arguments.emplace_back("--small");
  }
  for (const auto& [name, value] : settings.sizes) {
    arguments.insert(arguments.end(), {"--size", fmt::format("{}={}", name, value)});
  }
  auto process = runner::WorkerProcess::start(
      runner::make_program_launch("profiler", python, scratch, wrapper, arguments));
  const auto ended =
      process.run_to_exit(std::chrono::milliseconds(static_cast<long>(settings.timeout_s * 1000)));
  if (ended.kind == runner::WorkerFailureKind::timeout) {
    return {std::nullopt, fmt::format("the profiled run {}", ended.message)};
  }
  std::error_code error;
  if (!fs::exists(result, error)) {
    return {std::nullopt, fmt::format("{}; its output: {}", ended.message, log_reason(process.log_tail()))};
  }
  try {
    return {profiler_output_from_json(nlohmann::json::parse(source::read_text_file(result))), ""};
  } catch (const std::exception& failure) {
    return {std::nullopt, failure.what()};
  }
}

std::string safe_file_name(const std::string& name) {
  std::string safe;
  for (const char c : name) {
    safe += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.') ? c : '_';
  }
  return safe.empty() ? "unknown-gpu" : safe;
}

std::optional<RooflineCeilings> load_ceilings(const fs::path& path, std::string& why_not) {
  try {
    return ceilings_from_json(nlohmann::json::parse(source::read_text_file(path)));
  } catch (const std::exception& error) {
    why_not = fmt::format("{}: {}", path.string(), error.what());
    return std::nullopt;
  }
}

// The cached ceilings of this GPU model, measured now (about half a minute) when there are none.
std::optional<RooflineCeilings> cached_ceilings(const runner::PythonEnvironment& python,
                                                const fs::path& scratch, const ProfileRunSettings& settings,
                                                const std::string& device_name, std::string& why_not) {
  const auto cache = ceilings_cache_path(device_name);
  std::error_code error;
  if (!fs::exists(cache, error)) {
    fs::create_directories(cache.parent_path(), error);
    const auto measured = scratch / "ceilings.json";
    auto process = runner::WorkerProcess::start(runner::make_program_launch(
        "ceilings", python, scratch, {}, {"--device", settings.device, "--out", measured.string()}));
    const auto ended =
        process.run_to_exit(std::chrono::milliseconds(static_cast<long>(kCeilingsTimeoutS * 1000)));
    if (ended.kind != runner::WorkerFailureKind::exited || ended.exit_code != 0) {
      why_not = fmt::format("measuring the ceilings failed ({}): {}", ended.message,
                            log_reason(process.log_tail()));
      return std::nullopt;
    }
    fs::copy_file(measured, cache, fs::copy_options::overwrite_existing, error);
    if (error) {
      return load_ceilings(measured, why_not);  // measured, but not kept for next time
    }
  }
  return load_ceilings(cache, why_not);
}

}  // namespace

std::optional<fs::path> find_ncu(const std::optional<fs::path>& explicit_path) {
  if (explicit_path) {
    return executable_file(*explicit_path) ? explicit_path : std::nullopt;
  }
  if (const auto configured = runner::environment_variable("KFORGE_NCU"); !configured.empty()) {
    return executable_file(configured) ? std::optional<fs::path>(configured) : std::nullopt;
  }
  std::istringstream path(runner::environment_variable("PATH"));
  std::string folder;
  while (std::getline(path, folder, ':')) {
    if (!folder.empty() && executable_file(fs::path(folder) / "ncu")) {
      return fs::path(folder) / "ncu";
    }
  }
  const fs::path usual("/usr/local/cuda/bin/ncu");
  return executable_file(usual) ? std::optional<fs::path>(usual) : std::nullopt;
}

fs::path ceilings_cache_path(const std::string& device_name) {
  return store::ResultStore::default_path().parent_path() / "ceilings" /
         (safe_file_name(device_name) + ".json");
}

std::vector<std::string> ncu_command(const fs::path& ncu, const fs::path& log_file) {
  return {ncu.string(), "--clock-control",
          "none",       "--profile-from-start",
          "off",        "--target-processes",
          "all",        "--print-units",
          "base",       "--csv",
          "--page",     "raw",
          "--log-file", log_file.string(),
          "--metrics",  std::string(ncu_metric_list())};
}

ProfileEvidence gather_profile_evidence(const ProfileRunSettings& settings) {
  ProfileEvidence evidence;
  const auto python = runner::find_python_environment(settings.python);
  const auto scratch = runner::ScratchSpace::create();
  const auto code = scratch.directory() / "code";
  fs::create_directories(code);
  std::ofstream(code / "candidate.py") << settings.candidate_code;
  // ncu replays each kernel many times: no other kforge may time on this GPU meanwhile, and ours must not
  // disturb theirs.
  const auto lease = runner::TimingLease::acquire(settings.gpu_identity, kLeaseWaitLimit);
  TargetRun run;
  if (settings.ncu) {
    const auto log_file = scratch.directory() / "ncu.csv";
    run = run_target(python, scratch.directory(), ncu_command(*settings.ncu, log_file), settings);
    std::error_code error;
    if (run.output && fs::exists(log_file, error)) {
      try {
        evidence.ncu = parse_ncu_raw_csv(source::read_text_file(log_file));
      } catch (const std::exception& failure) {
        evidence.ncu_unavailable = fmt::format("its output could not be read: {}", failure.what());
      }
    } else {
      evidence.ncu_unavailable = fmt::format("the run under {} failed: {}", settings.ncu->string(),
                                             run.output ? "it wrote no profile" : run.failure);
    }
    if (!run.output) {
      run = run_target(python, scratch.directory(), {}, settings);  // the facts Triton has, at least
    }
  } else {
    evidence.ncu_unavailable = settings.ncu_missing;
    run = run_target(python, scratch.directory(), {}, settings);
  }
  evidence.triton = run.output;
  evidence.triton_unavailable = run.failure;
  if (settings.ceilings_file) {
    evidence.ceilings = load_ceilings(*settings.ceilings_file, evidence.ceilings_unavailable);
  } else if (evidence.ncu && evidence.triton) {
    evidence.ceilings = cached_ceilings(python, scratch.directory(), settings, evidence.triton->device,
                                        evidence.ceilings_unavailable);
  } else if (evidence.ncu) {
    evidence.ceilings_unavailable =
        "the GPU model is unknown (the profiled run reported nothing); pass --ceilings FILE";
  }
  return evidence;
}

}  // namespace kforge::profile
