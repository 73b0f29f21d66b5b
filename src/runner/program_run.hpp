#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "runner/worker_process.hpp"

namespace kforge::runner {

// How a worker module run once as a program ended: its exit, the JSON it wrote to its result file
// (nullopt when there is none or it is not a JSON object) and the end of its log.
struct ProgramRun {
  WorkerFailure ended;
  std::optional<nlohmann::json> answer;
  std::string log_tail;  // at most `log_bytes` of the program's stdout and stderr
};

// Starts `launch`, waits for it to exit (killing its group after `timeout_s`) and reads `result_file`.
// Throws std::runtime_error only when the program cannot be started.
ProgramRun run_program(const WorkerLaunch& launch, const std::filesystem::path& result_file, double timeout_s,
                       std::size_t log_bytes = 600);

// The same for a program already started (forked by a zygote: CandidateZygote::fork_program).
ProgramRun run_program(WorkerProcess process, const std::filesystem::path& result_file, double timeout_s,
                       std::size_t log_bytes = 600);

}  // namespace kforge::runner
