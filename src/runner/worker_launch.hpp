#pragma once

#include <filesystem>
#include <string>

#include "runner/python_environment.hpp"
#include "runner/worker_process.hpp"

namespace kforge::runner {

enum class WorkerRole { judge, candidate };

// The command line and scrubbed environment of a judge or candidate worker. On the CPU the
// candidate runs Triton's interpreter; each worker gets its own Triton cache inside the scratch folder.
WorkerLaunch make_worker_launch(WorkerRole role, const PythonEnvironment& python,
                                const std::filesystem::path& scratch, bool cpu_device);

}  // namespace kforge::runner
