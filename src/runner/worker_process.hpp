#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "runner/memory_watchdog.hpp"
#include "runner/sandbox.hpp"
#include "runner/sandbox_policy.hpp"

namespace kforge::runner {

// How to start one worker: the interpreter, its arguments and its whole (scrubbed) environment.
struct WorkerLaunch {
  std::filesystem::path executable;
  std::vector<std::string> arguments;
  std::vector<std::pair<std::string, std::string>> environment;
  std::filesystem::path working_directory;
  std::optional<SandboxPolicy> sandbox;  // set for untrusted code: applied between fork and exec
  // fds 3 and 4 are one AF_UNIX stream socket instead of two pipes, so that a request can carry file
  // descriptors (the candidate zygote receives each candidate's pipes this way).
  bool socket_channel = false;
  // For untrusted code that speaks the protocol (the candidate worker): replies go out on a descriptor
  // chosen at run time (fd 4 stays closed), the worker learns it from a first line on its request pipe,
  // and every reply must echo the fresh random nonce of its request. A line the candidate writes into
  // the channel cannot carry the nonce it never saw, so a forged reply is detected (WorkerFailureKind::
  // forged) instead of read as the worker's (docs/threat-model.md, "Forged replies").
  bool hidden_reply_channel = false;
};

// The environment layer of a sandbox status: "on (only NAME, NAME, ...)".
std::string environment_summary(const WorkerLaunch& launch);

enum class WorkerFailureKind { timeout, exited, signaled, protocol, forged, memory_limit };

// Why a call got no reply: the worker hung, exited, was killed by a signal, spoke nonsense, or was killed
// by the memory watchdog.
struct WorkerFailure {
  WorkerFailureKind kind = WorkerFailureKind::protocol;
  std::string message;
  int exit_code = 0;
  int signal = 0;
};

using WorkerReply = std::variant<nlohmann::json, WorkerFailure>;

// How long one call may take. `limit` without progress; while `progress` returns a new value (work the
// supervisor can see, e.g. compiled kernels landing in the worker's cache), the deadline moves to
// `limit` after the change, never past `limit + extension` after the start. A worker that hangs after
// its last visible progress is killed `limit` later.
struct CallLimit {
  std::chrono::milliseconds limit{0};
  std::chrono::milliseconds extension{0};
  std::function<std::uint64_t()> progress;  // read about every 250 ms; null: no extension

  CallLimit() = default;
  template <class Rep, class Period>
  CallLimit(std::chrono::duration<Rep, Period> fixed)  // NOLINT(google-explicit-constructor): a plain timeout
      : limit(std::chrono::duration_cast<std::chrono::milliseconds>(fixed)) {}
  CallLimit(std::chrono::milliseconds base, std::chrono::milliseconds more,
            std::function<std::uint64_t()> probe)
      : limit(base), extension(more), progress(std::move(probe)) {}
};

// A worker process in its own process group, spoken to with JSON lines on fds 3 (in) and 4 (out);
// its stdout and stderr are kept as a bounded log. The destructor always kills and reaps the group.
class WorkerProcess {
 public:
  static constexpr std::size_t kLogTailBytes = std::size_t{64} * 1024;
  static constexpr std::size_t kMaxReplyBytes = std::size_t{64} * 1024 * 1024;

  // Throws std::runtime_error when the process cannot be started (an environment problem), also when
  // its sandbox's mode requires a layer that this kernel or the child could not set up.
  static WorkerProcess start(const WorkerLaunch& launch);
  // Takes charge of a process this one did not fork but is the parent of (a candidate the zygote forked
  // and that was re-parented here, see candidate_zygote.hpp), speaking the same protocol on these fds.
  // `hidden_reply_fd` is the descriptor number the child replies on when the zygote set up a hidden
  // reply channel (see WorkerLaunch::hidden_reply_channel), -1 for the well-known fd 4.
  static WorkerProcess adopt(pid_t pid, int request_fd, int reply_fd, int log_fd,
                             nlohmann::json sandbox_status, std::optional<std::uint64_t> memory_limit,
                             int hidden_reply_fd = -1);
  // A descriptor number for a hidden reply channel: random, above the well-known ones, below NOFILE.
  static int choose_hidden_reply_fd();

  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;
  WorkerProcess(WorkerProcess&& other) noexcept;
  WorkerProcess& operator=(WorkerProcess&& other) noexcept;
  ~WorkerProcess();

  // Sends one request and waits for its reply; on timeout or death the group is killed and reaped.
  WorkerReply call(const nlohmann::json& request, const CallLimit& limit);
  // The same, passing these file descriptors along with the request (needs WorkerLaunch::socket_channel).
  WorkerReply call_passing(const nlohmann::json& request, const std::vector<int>& fds,
                           const CallLimit& limit);

  // For a program that does its work without the protocol (run once, result in a file): closes its
  // input and waits for it to exit, killing the group at the deadline. An exit status of 0 comes back
  // as kind `exited` with exit_code 0.
  WorkerFailure run_to_exit(std::chrono::milliseconds timeout);

  void suspend() const;  // SIGSTOP the group, e.g. while the other side is being timed
  void resume() const;   // SIGCONT
  void stop();           // close its input, give it a moment, then kill the group and reap
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  std::string log_tail() const { return log_; }
  // The sandbox's layers as PreparedSandbox::status() reports them; null for an unsandboxed worker.
  const nlohmann::json& sandbox_status() const { return sandbox_status_; }
  // What the child reported layer by layer (empty for an unsandboxed or adopted worker).
  const SandboxReport& sandbox_report() const { return sandbox_report_; }

 private:
  WorkerProcess(pid_t pid, int request_fd, int reply_fd, int log_fd);
  void drain_log(bool until_eof);
  void append_log(const char* data, std::size_t size);
  WorkerFailure reap_after_eof();
  WorkerFailure exit_status(int status);  // reaps what is left of the group; status from waitpid
  WorkerFailure kill_and_reap(WorkerFailureKind kind, std::string message);
  std::optional<WorkerFailure> enforce_memory_limit();
  void close_fds();
  bool send_request(const std::string& line, const std::vector<int>& fds) const;
  void reap_group_leftovers() const;
  // Tells a worker with a hidden reply channel where to reply (the first line of its request pipe).
  void announce_reply_channel(int hidden_reply_fd);
  std::optional<WorkerFailure> check_seal(const nlohmann::json& reply, const std::string& nonce);
  void forget_group();  // the group is gone: an interruption need not stop it
  // The worker's exit: its pid once it exited (status set), 0 while it runs, -1 when it cannot be
  // waited for. A worker the fork server started is waited for through the server's status line.
  pid_t wait_exit(int& status, bool block);
  // Starts `launch` on the warm fork server (fork_server.hpp) with these child ends; nullopt: start it here.
  static std::optional<WorkerProcess> start_on_server(const WorkerLaunch& launch, int request_read,
                                                      int reply_write, int log_write, int request_write,
                                                      int reply_read, int log_read);

  pid_t pid_ = -1;
  int request_fd_ = -1;
  int reply_fd_ = -1;
  int log_fd_ = -1;
  bool sealed_ = false;  // replies must echo their request's nonce (a hidden reply channel)
  std::string pending_;
  std::string log_;
  nlohmann::json sandbox_status_;
  SandboxReport sandbox_report_;
  pid_t group_ = -1;           // the process group, kept after pid_ is reaped to collect what the group left
  int server_status_fd_ = -1;  // a worker the fork server started: its wait status arrives here
  std::optional<MemoryWatchdog> watchdog_;
};

}  // namespace kforge::runner
