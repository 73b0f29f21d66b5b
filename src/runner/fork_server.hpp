#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

#include "runner/worker_process.hpp"

namespace kforge::runner {

// A warm fork server shared by kforge invocations (python/kforge/worker/fork_server.py): with
// KFORGE_FORK_SERVER set to a folder, a judge is forked from a Python process that imported torch once,
// instead of a fresh interpreter paying about 2 s of CPU start-up per evaluation. kforge starts a server
// per judge environment the first time it needs one (the judge that asked still starts fresh) and finds
// it again by a socket named after that environment. The server forks only the judge, only for a peer of
// the same user that is not sandboxed, and only with the environment it was started with, less the
// per-evaluation folders. Kernel mode's wrapper probe and test-block capture (kforge.worker.kernel_capture,
// trusted like a judge) are served the same way, by a server of their own environment.

inline constexpr const char* kForkServerVariable = "KFORGE_FORK_SERVER";
inline constexpr double kForkServerIdleSeconds = 600.0;

// The descriptors a forked worker gets: its log (stdout and stderr), fd 3 and fd 4.
struct ForkedWorkerFds {
  int log = -1;
  int requests = -1;
  int replies = -1;
};

// A worker the server forked: not kforge's child, so its wait status comes on `status_fd` (the server
// writes it when the worker exits, and kills the worker's group when this descriptor closes first).
struct ServerStartedWorker {
  pid_t pid = -1;
  int status_fd = -1;
};

// The folder KFORGE_FORK_SERVER names, when set and usable (created with mode 0700 if missing, owned by
// this user); nullopt otherwise.
std::optional<std::filesystem::path> fork_server_folder();

// Whether a server may start `launch`: an unsandboxed judge or kernel capture without a hidden reply
// channel.
bool fork_server_may_start(const WorkerLaunch& launch);

// The socket of the server for `launch`'s interpreter and environment (per-evaluation folders left out).
std::filesystem::path fork_server_socket(const std::filesystem::path& folder, const WorkerLaunch& launch);

// Asks the server for `launch` to fork it with `fds`; nullopt when no server answered or it declined
// (then a server for this environment is started in the background for the next evaluations, and the
// caller starts this one itself).
std::optional<ServerStartedWorker> start_on_fork_server(const std::filesystem::path& folder,
                                                        const WorkerLaunch& launch,
                                                        const ForkedWorkerFds& fds);

// The raw wait status the server sent on `status_fd`, waiting up to `timeout_ms` (-1: until it comes);
// nullopt on timeout. A server that closed the connection without one reports SIGKILL.
std::optional<int> read_server_wait_status(int status_fd, int timeout_ms);

}  // namespace kforge::runner
