#include "runner/program_run.hpp"

#include <chrono>
#include <fstream>

namespace kforge::runner {

ProgramRun run_program(const WorkerLaunch& launch, const std::filesystem::path& result_file, double timeout_s,
                       std::size_t log_bytes) {
  return run_program(WorkerProcess::start(launch), result_file, timeout_s, log_bytes);
}

ProgramRun run_program(WorkerProcess process, const std::filesystem::path& result_file, double timeout_s,
                       std::size_t log_bytes) {
  ProgramRun run;
  run.ended = process.run_to_exit(std::chrono::milliseconds(static_cast<long>(timeout_s * 1000)));
  std::ifstream in(result_file);
  if (in) {
    auto answer = nlohmann::json::parse(in, nullptr, false);
    if (answer.is_object()) {
      run.answer = std::move(answer);
    }
  }
  run.log_tail = process.log_tail();
  if (run.log_tail.size() > log_bytes) {
    run.log_tail = run.log_tail.substr(run.log_tail.size() - log_bytes);
  }
  return run;
}

}  // namespace kforge::runner
