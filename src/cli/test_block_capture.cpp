#include "cli/test_block_capture.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "runner/environment_probe.hpp"
#include "runner/program_run.hpp"
#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_launch.hpp"

namespace kforge::cli {

namespace fs = std::filesystem;

namespace {

problem::ObservedCall observed_call(const nlohmann::json& answer) {
  problem::ObservedCall call;
  for (const auto& index : answer.value("writes", nlohmann::json::array())) {
    if (index.is_number_integer()) {
      call.writes.push_back(index.get<int>());
    }
  }
  call.returns_none = answer.value("returns_none", false);
  return call;
}

// `python -m kforge.worker.kernel_capture ARGUMENTS`, which a warm fork server may start
// (KFORGE_FORK_SERVER). Without a GPU it runs the user's file on Triton's interpreter, set at launch and not
// only by the worker: a served worker's Triton was imported by the server.
runner::WorkerLaunch kernel_capture_launch(const runner::PythonEnvironment& environment,
                                           const fs::path& scratch,
                                           const std::vector<std::string>& arguments) {
  auto launch = runner::make_program_launch("kernel_capture", environment, scratch, {}, arguments);
  if (runner::resolve_device("auto") == "cpu") {
    runner::set_visible_gpus(launch, "");
  }
  return launch;
}

}  // namespace

CapturedInputs captured_inputs(const nlohmann::json& answer, const std::string& entry) {
  if (!answer.contains("spec")) {
    throw std::runtime_error(fmt::format("the test block capture ({}): {}", answer.value("stage", "internal"),
                                         answer.value("error", "no spec and no error")));
  }
  return {answer["spec"].dump(2), answer.value("entry", entry), observed_call(answer),
          answer.value("called_tests", std::vector<std::string>{})};
}

CapturedInputs capture_test_block_spec(const fs::path& kernel, const std::string& entry,
                                       std::optional<int> case_index, const std::optional<fs::path>& python,
                                       double timeout_s) {
  const auto environment = runner::find_python_environment(python);
  const auto scratch = runner::ScratchSpace::create();
  const auto result = scratch.directory() / "kernel-capture.json";
  // Absolute paths: the worker runs in its own private folder.
  std::vector<std::string> arguments{"--kernel", fs::absolute(kernel).string(), "--out", result.string()};
  if (!entry.empty()) {
    arguments.insert(arguments.end(), {"--entry", entry});
  }
  if (case_index) {
    arguments.insert(arguments.end(), {"--case", std::to_string(*case_index)});
  }
  const auto run = runner::run_program(kernel_capture_launch(environment, scratch.directory(), arguments),
                                       result, timeout_s);
  if (!run.answer) {
    throw std::runtime_error(fmt::format("the test block capture {}: {}", run.ended.message, run.log_tail));
  }
  return captured_inputs(*run.answer, entry);
}

problem::ObservedCall probe_wrapper_writes(const fs::path& problem, const std::string& entry, bool small,
                                           const std::map<std::string, std::string>& sizes,
                                           std::uint64_t seed, const std::optional<fs::path>& python,
                                           double timeout_s) {
  const auto environment = runner::find_python_environment(python);
  const auto scratch = runner::ScratchSpace::create();
  const auto result = scratch.directory() / "wrapper-probe.json";
  std::vector<std::string> arguments{"--probe", fs::absolute(problem).string(),
                                     "--entry", entry,
                                     "--out",   result.string(),
                                     "--seed",  std::to_string(seed)};
  if (small) {
    arguments.emplace_back("--small");
  }
  for (const auto& [name, value] : sizes) {
    arguments.emplace_back("--size");
    arguments.push_back(fmt::format("{}={}", name, value));
  }
  const auto run = runner::run_program(kernel_capture_launch(environment, scratch.directory(), arguments),
                                       result, timeout_s);
  if (!run.answer) {
    throw std::runtime_error(fmt::format("the wrapper probe {}: {}", run.ended.message, run.log_tail));
  }
  if (run.answer->contains("error")) {
    throw std::runtime_error(fmt::format("the wrapper probe ({}): {}", run.answer->value("stage", "internal"),
                                         run.answer->value("error", "")));
  }
  return observed_call(*run.answer);
}

std::optional<std::string> capture_needs_a_gpu(const std::string& error, const fs::path& kernel) {
  const bool cuda_failure =
      error.find("NVIDIA") != std::string::npos || error.find("CUDA") != std::string::npos;
  if (!cuda_failure || runner::resolve_device("auto") != "cpu") {
    return std::nullopt;
  }
  return fmt::format(
      "the test block of {} needs a GPU (it creates CUDA tensors) and this machine has none: {}. On the CPU "
      "give the wrapper's arguments as a JSON spec with --inputs SPEC.json instead (docs/kernel-mode.md)",
      kernel.string(), error);
}

}  // namespace kforge::cli
