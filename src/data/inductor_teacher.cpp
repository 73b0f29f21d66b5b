#include "data/inductor_teacher.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>
#include <vector>

#include "runner/python_environment.hpp"
#include "runner/scratch_space.hpp"
#include "runner/worker_launch.hpp"
#include "runner/worker_process.hpp"

namespace kforge::data {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kLogTail = 600;

std::vector<std::string> teacher_arguments(const fs::path& problem, const std::string& name,
                                           const InductorTeacherSettings& settings, const fs::path& result) {
  // Absolute paths: the worker runs in its own private folder.
  std::vector<std::string> arguments = {"--problem", fs::absolute(problem).string(),
                                        "--out",     result.string(),
                                        "--device",  settings.device,
                                        "--sizes",   nlohmann::json(settings.sizes).dump()};
  if (settings.small) {
    arguments.emplace_back("--small");
  }
  if (!settings.captures.empty()) {
    const auto capture =
        fs::absolute(settings.captures) / (name + (settings.small ? ".small" : "") + ".capture.json");
    std::error_code error;
    arguments.emplace_back(fs::exists(capture, error) ? "--capture-in" : "--capture-out");
    arguments.push_back(capture.string());
  }
  return arguments;
}

InductorCandidate read_answer(const fs::path& result) {
  std::ifstream in(result);
  const auto answer = nlohmann::json::parse(in, nullptr, false);
  if (!answer.is_object()) {
    return {"", "internal", "the inductor teacher's result is not a JSON object"};
  }
  if (answer.contains("candidate") && answer["candidate"].is_string()) {
    return {answer["candidate"].get<std::string>(), "", ""};
  }
  return {"", answer.value("stage", "internal"),
          answer.value("error", "the teacher gave neither a candidate nor an error")};
}

}  // namespace

InductorCandidate inductor_candidate(const fs::path& problem, const std::string& name,
                                     const InductorTeacherSettings& settings) {
  try {
    if (!settings.captures.empty()) {
      fs::create_directories(settings.captures);
    }
    const auto python = runner::find_python_environment(settings.python);
    const auto scratch = runner::ScratchSpace::create();
    const auto result = scratch.directory() / "inductor-teacher.json";
    auto process = runner::WorkerProcess::start(
        runner::make_program_launch("inductor_teacher", python, scratch.directory(), {},
                                    teacher_arguments(problem, name, settings, result)));
    const auto ended =
        process.run_to_exit(std::chrono::milliseconds(static_cast<long>(settings.timeout_s * 1000)));
    std::error_code error;
    if (!fs::exists(result, error)) {
      auto log = process.log_tail();
      if (log.size() > kLogTail) {
        log = log.substr(log.size() - kLogTail);
      }
      const bool timed_out = ended.kind == runner::WorkerFailureKind::timeout;
      return {"", timed_out ? "timeout" : "internal",
              fmt::format("the inductor teacher {}: {}", ended.message, log)};
    }
    return read_answer(result);
  } catch (const std::exception& failure) {
    return {"", "environment", fmt::format("the inductor teacher could not run: {}", failure.what())};
  }
}

Teacher inductor_teacher(const InductorTeacherSettings& settings) {
  return [settings](const SftProblem& problem, int n) {
    std::vector<TeacherSample> samples(static_cast<std::size_t>(std::max(n, 0)));
    if (samples.empty()) {
      return samples;
    }
    auto answer = inductor_candidate(problem.entry.problem, problem.entry.name, settings);
    if (answer.candidate.empty()) {
      samples.front().error = fmt::format("inductor {}: {}", answer.stage, answer.error);
    } else {
      samples.front().text = "```python\n" + answer.candidate + "```\n";
    }
    for (std::size_t i = 1; i < samples.size(); ++i) {
      samples[i].error = "the inductor teacher is deterministic: one sample per problem";
    }
    return samples;
  };
}

std::string inductor_teacher_problem(const std::string& device, const std::filesystem::path& captures) {
  if (device.rfind("cuda", 0) == 0) {
    return "";
  }
  std::error_code error;
  if (!captures.empty()) {
    for (const auto& entry : std::filesystem::directory_iterator(captures, error)) {
      if (entry.path().filename().string().ends_with(".capture.json")) {
        return "";
      }
    }
  }
  return fmt::format(
      "the inductor teacher needs a GPU: on the CPU torch.compile writes C++, not Triton; there is no GPU "
      "here{}. Run it on a GPU machine, or give --captures DIR holding captures made on one "
      "(docs/training.md)",
      captures.empty() ? "" : fmt::format(" and {} holds no captures", captures.string()));
}

}  // namespace kforge::data
