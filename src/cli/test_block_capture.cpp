#include "cli/test_block_capture.hpp"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_launch.hpp"
#include "runner/worker_process.hpp"

namespace kforge::cli {

namespace fs = std::filesystem;

std::string capture_test_block_spec(const fs::path& kernel, const std::string& entry,
                                    std::optional<int> case_index, const std::optional<fs::path>& python,
                                    double timeout_s) {
  constexpr std::size_t kLogTail = 600;
  const auto environment = runner::find_python_environment(python);
  const auto scratch = runner::ScratchSpace::create();
  const auto result = scratch.directory() / "kernel-capture.json";
  // Absolute paths: the worker runs in its own private folder.
  std::vector<std::string> arguments{"--kernel",     fs::absolute(kernel).string(), "--entry", entry, "--out",
                                     result.string()};
  if (case_index) {
    arguments.insert(arguments.end(), {"--case", std::to_string(*case_index)});
  }
  auto process = runner::WorkerProcess::start(
      runner::make_program_launch("kernel_capture", environment, scratch.directory(), {}, arguments));
  const auto ended = process.run_to_exit(std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)));
  std::ifstream in(result);
  const auto answer = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  if (!answer.is_object()) {
    auto log = process.log_tail();
    log = log.size() > kLogTail ? log.substr(log.size() - kLogTail) : log;
    throw std::runtime_error(fmt::format("the test block capture {}: {}", ended.message, log));
  }
  if (!answer.contains("spec")) {
    throw std::runtime_error(fmt::format("the test block capture ({}): {}", answer.value("stage", "internal"),
                                         answer.value("error", "no spec and no error")));
  }
  return answer["spec"].dump(2);
}

}  // namespace kforge::cli
