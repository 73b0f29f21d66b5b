#include "runner/worker_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "runner/cleanup_registry.hpp"
#include "runner/descriptor_passing.hpp"
#include "runner/exec_arguments.hpp"
#include "runner/fork_server.hpp"
#include "runner/sandbox.hpp"

namespace kforge::runner {
namespace {

constexpr int kRequestFd = 3;
constexpr int kReplyFd = 4;
constexpr auto kGracePeriod = std::chrono::milliseconds(2000);

struct Pipe {
  int read_end = -1;
  int write_end = -1;
};

Pipe make_pipe() {
  std::array<int, 2> fds{};
  if (pipe2(fds.data(), O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  return Pipe{fds[0], fds[1]};
}

void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

// What the child tells the supervisor before exec, in one write (smaller than PIPE_BUF, so atomic).
struct ChildStatus {
  enum class Stage : int { ready, setup_failed, sandbox_failed, exec_failed };
  Stage stage = Stage::ready;
  int error = 0;
  SandboxReport sandbox;
};

static_assert(std::is_trivially_copyable_v<ChildStatus> && sizeof(ChildStatus) <= PIPE_BUF,
              "the child's status travels as raw bytes in one atomic pipe write");

struct ChildPlan {
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* working_dir = nullptr;
  int request_read = -1;
  int reply_write = -1;
  int log_write = -1;
  int status_write = -1;
  int hidden_reply_fd = -1;  // reply on this descriptor instead of kReplyFd (which then stays closed)
  PreparedSandbox* sandbox = nullptr;
};

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void exec_child(const ChildPlan& plan) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives a killed kforge
  signal(SIGPIPE, SIG_DFL);
  ChildStatus status;
  auto report_and_exit = [&status, &plan](ChildStatus::Stage stage, int error) {
    status.stage = stage;
    status.error = error;
    [[maybe_unused]] auto written = write(plan.status_write, &status, sizeof status);
    _exit(127);
  };
  const int dev_null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Move the fds above the fixed slots first so the dup2 calls cannot clobber each other.
  const int req = fcntl(plan.request_read, F_DUPFD_CLOEXEC, 10);
  const int rep = fcntl(plan.reply_write, F_DUPFD_CLOEXEC, 10);  // the same socket as req on a socket channel
  const int log = fcntl(plan.log_write, F_DUPFD_CLOEXEC, 10);
  const bool hidden = plan.hidden_reply_fd >= 0;
  if (dev_null < 0 || req < 0 || rep < 0 || log < 0 || dup2(dev_null, STDIN_FILENO) < 0 ||
      dup2(log, STDOUT_FILENO) < 0 || dup2(log, STDERR_FILENO) < 0 || dup2(req, kRequestFd) < 0 ||
      (!hidden && dup2(rep, kReplyFd) < 0) || chdir(plan.working_dir) != 0) {
    report_and_exit(ChildStatus::Stage::setup_failed, errno);
  }
  close_range(kReplyFd + 1, ~0U, CLOSE_RANGE_CLOEXEC);  // nothing else kforge inherited leaks in
  if (hidden) {  // after close_range: dup2 clears close-on-exec on the new descriptor
    const bool moved =
        rep == plan.hidden_reply_fd ? fcntl(rep, F_SETFD, 0) == 0 : dup2(rep, plan.hidden_reply_fd) >= 0;
    if (!moved) {
      report_and_exit(ChildStatus::Stage::setup_failed, errno);
    }
  }
  if (plan.sandbox != nullptr && !plan.sandbox->apply_in_child(status.sandbox)) {
    report_and_exit(ChildStatus::Stage::sandbox_failed, status.sandbox.failed_errno);
  }
  [[maybe_unused]] auto written = write(plan.status_write, &status, sizeof status);
  execve(plan.argv[0], plan.argv, plan.envp);
  report_and_exit(ChildStatus::Stage::exec_failed, errno);
  _exit(127);  // not reached: report_and_exit does not return
}

// Reads one whole ChildStatus; false at end of file (the child died or exec'd without a word).
bool read_child_status(int fd, ChildStatus& status) {
  std::array<char, sizeof(ChildStatus)> buffer{};
  std::size_t filled = 0;
  while (filled < buffer.size()) {
    const auto count = read(fd, buffer.data() + filled, buffer.size() - filled);
    if (count < 0 && errno == EINTR) {
      continue;
    }
    if (count <= 0) {
      return false;
    }
    filled += static_cast<std::size_t>(count);
  }
  std::memcpy(&status, buffer.data(), sizeof status);
  return true;
}

// The moving deadline of one call (see CallLimit): pushed on while the progress value changes.
class CallDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  CallDeadline(const CallLimit& limit, Clock::time_point start)
      : limit_(limit),
        start_(start),
        deadline_(start + limit.limit),
        latest_(start + limit.limit + limit.extension),
        last_value_(limit.progress ? limit.progress() : 0),
        next_probe_(start + kProgressProbeInterval) {}

  // The deadline now, after looking for progress when it is time to.
  Clock::time_point at(Clock::time_point now) {
    if (limit_.progress && now >= next_probe_ && deadline_ < latest_) {
      next_probe_ = now + kProgressProbeInterval;
      const auto value = limit_.progress();
      if (value != last_value_) {
        last_value_ = value;
        deadline_ = std::min(latest_, now + limit_.limit);
        extended_ = true;
      }
    }
    return deadline_;
  }

  std::string expired_message(Clock::time_point now) const {
    const double waited = std::chrono::duration<double>(now - start_).count();
    const double base = std::chrono::duration<double>(limit_.limit).count();
    if (!extended_) {
      return fmt::format("no reply within {:.0f} s", base);
    }
    return fmt::format(
        "no reply within {:.0f} s ({:.0f} s after the last visible progress; progress extends a call by "
        "{:.0f} s at most)",
        waited, base, std::chrono::duration<double>(limit_.extension).count());
  }

 private:
  static constexpr auto kProgressProbeInterval = std::chrono::milliseconds(250);
  const CallLimit& limit_;
  Clock::time_point start_;
  Clock::time_point deadline_;
  Clock::time_point latest_;
  std::uint64_t last_value_;
  Clock::time_point next_probe_;
  bool extended_ = false;
};

}  // namespace

std::string environment_summary(const WorkerLaunch& launch) {
  std::vector<std::string> names;
  names.reserve(launch.environment.size());
  for (const auto& [name, value] : launch.environment) {
    names.push_back(name);
  }
  return fmt::format("on (only {})", fmt::join(names, ", "));
}

WorkerProcess WorkerProcess::start(const WorkerLaunch& launch) {
  const ExecArguments exec(launch);
  const std::string working_dir = launch.working_directory.string();
  // Everything that allocates or can fail for a reason the user must hear happens here, before the fork.
  std::optional<PreparedSandbox> sandbox;
  if (launch.sandbox) {
    sandbox.emplace(PreparedSandbox::prepare(*launch.sandbox, KernelSupport::detect()));
  }

  Pipe requests;
  Pipe replies;
  if (launch.socket_channel) {
    // One bidirectional socket: the child reads and writes its end on fds 3 and 4, kforge its own end.
    std::array<int, 2> ends{};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends.data()) != 0) {
      throw std::runtime_error(fmt::format("cannot create a socket pair: {}", std::strerror(errno)));
    }
    requests = Pipe{ends[1], fcntl(ends[0], F_DUPFD_CLOEXEC, 0)};
    replies = Pipe{ends[0], fcntl(ends[1], F_DUPFD_CLOEXEC, 0)};
  } else {
    requests = make_pipe();
    replies = make_pipe();
  }
  Pipe log = make_pipe();
  if (!sandbox && fork_server_may_start(launch)) {
    if (auto started = start_on_server(launch, requests.read_end, replies.write_end, log.write_end,
                                       requests.write_end, replies.read_end, log.read_end)) {
      return std::move(*started);
    }
  }
  Pipe exec_status = make_pipe();
  const int hidden_reply_fd = launch.hidden_reply_channel ? choose_hidden_reply_fd() : -1;
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    for (int fd : {requests.read_end, requests.write_end, replies.read_end, replies.write_end, log.read_end,
                   log.write_end, exec_status.read_end, exec_status.write_end}) {
      ::close(fd);
    }
    throw std::runtime_error(fmt::format("cannot fork a worker process: {}", std::strerror(error)));
  }
  if (pid == 0) {
    exec_child(ChildPlan{exec.argv(), exec.envp(), working_dir.c_str(), requests.read_end, replies.write_end,
                         log.write_end, exec_status.write_end, hidden_reply_fd,
                         sandbox ? &*sandbox : nullptr});
  }
  setpgid(pid, pid);  // also here, so signals to the group work before the child runs
  for (int fd : {requests.read_end, replies.write_end, log.write_end, exec_status.write_end}) {
    ::close(fd);
  }
  ChildStatus status;
  const bool reported = read_child_status(exec_status.read_end, status);
  ChildStatus exec_failure;
  const bool exec_failed = reported && status.stage == ChildStatus::Stage::ready &&
                           read_child_status(exec_status.read_end, exec_failure);
  ::close(exec_status.read_end);
  WorkerProcess process(pid, requests.write_end, replies.read_end, log.read_end);
  if (!reported || status.stage != ChildStatus::Stage::ready || exec_failed) {
    process.stop();
    if (status.stage == ChildStatus::Stage::sandbox_failed && sandbox) {
      throw std::runtime_error(sandbox->failure(status.sandbox).value_or("cannot sandbox the worker"));
    }
    const int error = exec_failed ? exec_failure.error : status.error;
    throw std::runtime_error(fmt::format("cannot start {}: {}", launch.executable.string(),
                                         reported ? std::strerror(error) : "it died before exec"));
  }
  process.sandbox_report_ = status.sandbox;
  if (hidden_reply_fd >= 0) {
    process.announce_reply_channel(hidden_reply_fd);
  }
  if (sandbox) {
    process.sandbox_status_ = sandbox->status(status.sandbox);
    process.sandbox_status_["layers"]["environment"] = environment_summary(launch);
    if (const auto limit = sandbox->memory_limit()) {
      process.watchdog_.emplace(*limit);
    }
  }
  return process;
}

WorkerProcess WorkerProcess::adopt(pid_t pid, int request_fd, int reply_fd, int log_fd,
                                   nlohmann::json sandbox_status, std::optional<std::uint64_t> memory_limit,
                                   int hidden_reply_fd) {
  WorkerProcess process(pid, request_fd, reply_fd, log_fd);
  process.sandbox_status_ = std::move(sandbox_status);
  if (memory_limit) {
    process.watchdog_.emplace(*memory_limit);
  }
  if (hidden_reply_fd >= 0) {
    process.announce_reply_channel(hidden_reply_fd);
  }
  return process;
}

int WorkerProcess::choose_hidden_reply_fd() {
  // Above the fixed slots and the descriptors a worker opens itself, below RLIMIT_NOFILE (1024).
  constexpr int kLowest = 100;
  constexpr int kHighest = 999;
  std::random_device source;
  return std::uniform_int_distribution<int>(kLowest, kHighest)(source);
}

void WorkerProcess::announce_reply_channel(int hidden_reply_fd) {
  sealed_ = true;
  const nlohmann::json hello = {{"channel", {{"reply_fd", hidden_reply_fd}}}};
  // A worker that is already gone fails the first call, which reports it.
  [[maybe_unused]] const bool sent = send_request(hello.dump() + "\n", {});
}

namespace {

// 128 random bits as hex: the nonce one request carries and its reply must echo.
std::string fresh_nonce() {
  std::random_device source;
  std::uniform_int_distribution<std::uint32_t> word;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", word(source), word(source), word(source), word(source));
}

}  // namespace

std::optional<WorkerFailure> WorkerProcess::check_seal(const nlohmann::json& reply,
                                                       const std::string& nonce) {
  const auto found = reply.find("nonce");
  if (found != reply.end() && found->is_string() && found->get<std::string>() == nonce) {
    return std::nullopt;
  }
  return kill_and_reap(WorkerFailureKind::forged,
                       "a line on the reply channel did not carry its request's nonce: it was not written by "
                       "kforge's worker (candidate code wrote into the protocol channel)");
}

WorkerProcess::WorkerProcess(pid_t pid, int request_fd, int reply_fd, int log_fd)
    : pid_(pid), request_fd_(request_fd), reply_fd_(reply_fd), log_fd_(log_fd), group_(pid) {
  CleanupRegistry::instance().add_process_group(group_);
}

WorkerProcess::WorkerProcess(WorkerProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      request_fd_(std::exchange(other.request_fd_, -1)),
      reply_fd_(std::exchange(other.reply_fd_, -1)),
      log_fd_(std::exchange(other.log_fd_, -1)),
      sealed_(other.sealed_),
      pending_(std::move(other.pending_)),
      log_(std::move(other.log_)),
      sandbox_status_(std::move(other.sandbox_status_)),
      sandbox_report_(other.sandbox_report_),
      group_(std::exchange(other.group_, -1)),
      server_status_fd_(std::exchange(other.server_status_fd_, -1)),
      watchdog_(other.watchdog_) {}

WorkerProcess& WorkerProcess::operator=(WorkerProcess&& other) noexcept {
  if (this != &other) {
    stop();
    forget_group();
    pid_ = std::exchange(other.pid_, -1);
    request_fd_ = std::exchange(other.request_fd_, -1);
    reply_fd_ = std::exchange(other.reply_fd_, -1);
    log_fd_ = std::exchange(other.log_fd_, -1);
    sealed_ = other.sealed_;
    pending_ = std::move(other.pending_);
    log_ = std::move(other.log_);
    sandbox_status_ = std::move(other.sandbox_status_);
    sandbox_report_ = other.sandbox_report_;
    group_ = std::exchange(other.group_, -1);
    server_status_fd_ = std::exchange(other.server_status_fd_, -1);
    watchdog_ = other.watchdog_;
  }
  return *this;
}

WorkerProcess::~WorkerProcess() {
  stop();
  forget_group();
}

void WorkerProcess::forget_group() {
  if (group_ > 0) {
    CleanupRegistry::instance().forget_process_group(group_);
    group_ = -1;
  }
}

void WorkerProcess::append_log(const char* data, std::size_t size) {
  log_.append(data, size);
  if (log_.size() > kLogTailBytes) {
    log_.erase(0, log_.size() - kLogTailBytes);
  }
}

void WorkerProcess::drain_log(bool until_eof) {
  std::array<char, 16384> buffer{};
  while (log_fd_ >= 0) {
    pollfd entry{log_fd_, POLLIN, 0};
    if (poll(&entry, 1, until_eof ? 200 : 0) <= 0) {
      return;
    }
    const auto count = read(log_fd_, buffer.data(), buffer.size());
    if (count <= 0) {
      close_fd(log_fd_);
      return;
    }
    append_log(buffer.data(), static_cast<std::size_t>(count));
  }
}

WorkerReply WorkerProcess::call(const nlohmann::json& request, const CallLimit& limit) {
  return call_passing(request, {}, limit);
}

bool WorkerProcess::send_request(const std::string& line, const std::vector<int>& fds) const {
  std::string_view remaining = line;
  if (!fds.empty()) {
    // The descriptors ride on the first bytes of the line (SCM_RIGHTS); the rest follows as plain writes.
    const ssize_t sent = send_with_descriptors(request_fd_, remaining, fds);
    if (sent < 0) {
      return false;
    }
    remaining.remove_prefix(static_cast<std::size_t>(sent));
  }
  while (!remaining.empty()) {
    const auto written = write(request_fd_, remaining.data(), remaining.size());
    if (written < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    remaining.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

WorkerReply WorkerProcess::call_passing(const nlohmann::json& request, const std::vector<int>& passed_fds,
                                        const CallLimit& limit) {
  if (pid_ <= 0) {
    return WorkerFailure{WorkerFailureKind::exited, "the worker is no longer running", 0, 0};
  }
  if (auto over_limit = enforce_memory_limit()) {
    return *over_limit;
  }
  const auto start = std::chrono::steady_clock::now();
  CallDeadline deadline(limit, start);
  auto next_memory_check = std::chrono::steady_clock::now() + MemoryWatchdog::kInterval;
  std::string nonce;
  std::string line;
  if (sealed_) {
    nonce = fresh_nonce();
    nlohmann::json sealed = request;
    sealed["nonce"] = nonce;
    line = sealed.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else {
    line = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  if (!send_request(line, passed_fds)) {
    return reap_after_eof();  // EPIPE: the worker is gone
  }
  std::array<char, 65536> buffer{};
  while (true) {
    if (const auto newline = pending_.find('\n'); newline != std::string::npos) {
      std::string reply = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      drain_log(false);
      auto parsed = nlohmann::json::parse(reply, nullptr, false);
      if (parsed.is_discarded() || !parsed.is_object()) {
        if (sealed_) {  // kforge's worker writes whole JSON lines: anything else was written by someone else
          return kill_and_reap(WorkerFailureKind::forged,
                               "the reply channel carried a line that is not a JSON object: candidate code "
                               "wrote into the protocol channel");
        }
        return kill_and_reap(WorkerFailureKind::protocol,
                             "the worker sent a reply that is not a JSON object");
      }
      if (sealed_) {
        if (auto forged = check_seal(parsed, nonce)) {
          return *forged;
        }
        parsed.erase("nonce");
      }
      return parsed;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline.at(now)) {
      return kill_and_reap(WorkerFailureKind::timeout, deadline.expired_message(now));
    }
    const auto wait_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline.at(now) - now).count();
    std::array<pollfd, 2> fds{pollfd{reply_fd_, POLLIN, 0}, pollfd{log_fd_, POLLIN, 0}};
    const long poll_ms = watchdog_ ? MemoryWatchdog::kInterval.count() : (limit.progress ? 250 : 1000);
    const int ready =
        poll(fds.data(), log_fd_ >= 0 ? 2 : 1, static_cast<int>(std::min<long>(wait_ms, poll_ms)));
    if (ready < 0 && errno != EINTR) {
      return kill_and_reap(WorkerFailureKind::protocol, fmt::format("poll failed: {}", std::strerror(errno)));
    }
    if (watchdog_ && std::chrono::steady_clock::now() >= next_memory_check) {
      next_memory_check = std::chrono::steady_clock::now() + MemoryWatchdog::kInterval;
      if (auto over_limit = enforce_memory_limit()) {
        return *over_limit;
      }
    }
    if (log_fd_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP)) != 0) {
      drain_log(false);
    }
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const auto count = read(reply_fd_, buffer.data(), buffer.size());
      if (count <= 0) {
        return reap_after_eof();
      }
      pending_.append(buffer.data(), static_cast<std::size_t>(count));
      if (pending_.size() > kMaxReplyBytes) {
        return kill_and_reap(WorkerFailureKind::protocol, "the worker sent a reply larger than 64 MiB");
      }
    }
  }
}

WorkerFailure WorkerProcess::reap_after_eof() {
  // The reply pipe closed: the worker is exiting or dead. Give it a moment, then force it.
  const auto deadline = std::chrono::steady_clock::now() + kGracePeriod;
  int status = 0;
  pid_t done = 0;
  while ((done = wait_exit(status, false)) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (done == 0) {
    return kill_and_reap(WorkerFailureKind::exited, "the worker closed its reply pipe but did not exit");
  }
  return exit_status(status);
}

WorkerFailure WorkerProcess::run_to_exit(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) {
    return WorkerFailure{WorkerFailureKind::exited, "the process is no longer running", -1, 0};
  }
  close_fd(request_fd_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto next_memory_check = std::chrono::steady_clock::now() + MemoryWatchdog::kInterval;
  int status = 0;
  while (wait_exit(status, false) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return kill_and_reap(
          WorkerFailureKind::timeout,
          fmt::format("did not finish within {:.0f} s", std::chrono::duration<double>(timeout).count()));
    }
    if (watchdog_ && std::chrono::steady_clock::now() >= next_memory_check) {
      next_memory_check = std::chrono::steady_clock::now() + MemoryWatchdog::kInterval;
      if (auto over_limit = enforce_memory_limit()) {
        return *over_limit;
      }
    }
    pollfd entry{log_fd_, POLLIN, 0};
    if (log_fd_ < 0 || poll(&entry, 1, 50) <= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(log_fd_ < 0 ? 50 : 0));
      continue;
    }
    drain_log(false);
  }
  return exit_status(status);
}

WorkerFailure WorkerProcess::exit_status(int status) {
  kill(-pid_, SIGKILL);  // anything it left behind in its group
  pid_ = -1;
  reap_group_leftovers();
  drain_log(true);
  close_fds();
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return WorkerFailure{WorkerFailureKind::signaled,
                         fmt::format("the process was killed by {} ({})", signal_name(signal),
                                     sigdescr_np(signal) != nullptr ? sigdescr_np(signal) : "unknown"),
                         0, signal};
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return WorkerFailure{WorkerFailureKind::exited, fmt::format("the process exited with status {}", code),
                       code, 0};
}

WorkerFailure WorkerProcess::kill_and_reap(WorkerFailureKind kind, std::string message) {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    int status = 0;
    wait_exit(status, true);
    pid_ = -1;
    reap_group_leftovers();
  }
  drain_log(false);
  close_fds();
  return WorkerFailure{kind, std::move(message), 0, 0};
}

std::optional<WorkerFailure> WorkerProcess::enforce_memory_limit() {
  if (!watchdog_ || pid_ <= 0) {
    return std::nullopt;
  }
  auto message = watchdog_->check(pid_);
  if (!message) {
    return std::nullopt;
  }
  auto failure = kill_and_reap(WorkerFailureKind::memory_limit, std::move(*message));
  failure.signal = SIGKILL;
  return failure;
}

void WorkerProcess::suspend() const {
  if (pid_ > 0) {
    kill(-pid_, SIGSTOP);
  }
}

void WorkerProcess::resume() const {
  if (pid_ > 0) {
    kill(-pid_, SIGCONT);
  }
}

void WorkerProcess::stop() {
  if (pid_ <= 0) {
    close_fds();
    return;
  }
  resume();
  if (request_fd_ >= 0) {
    shutdown(request_fd_,
             SHUT_WR);  // a socket channel: its reply fd keeps the socket open (ENOTSOCK on a pipe)
  }
  close_fd(request_fd_);  // end of input asks the worker to exit on its own
  const auto deadline = std::chrono::steady_clock::now() + kGracePeriod;
  int status = 0;
  while (wait_exit(status, false) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill_and_reap(WorkerFailureKind::exited, "stopped");
      return;
    }
    drain_log(false);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(-pid_, SIGKILL);
  pid_ = -1;
  reap_group_leftovers();
  drain_log(true);
  close_fds();
}

void WorkerProcess::reap_group_leftovers() const {
  // Members of the group whose parent died first are re-parented to kforge when it is a subreaper (it is
  // once a candidate zygote runs): collect their exit statuses so they do not stay zombies.
  if (group_ > 0) {
    while (waitpid(-group_, nullptr, WNOHANG) > 0) {
    }
  }
}

void WorkerProcess::close_fds() {
  close_fd(request_fd_);
  close_fd(reply_fd_);
  close_fd(log_fd_);
  close_fd(server_status_fd_);  // the server kills the worker's group if it is still running
}

pid_t WorkerProcess::wait_exit(int& status, bool block) {
  if (server_status_fd_ < 0) {
    pid_t done = 0;
    while ((done = waitpid(pid_, &status, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {
    }
    return done;
  }
  // A killed worker's status comes within moments; a server that does not send it is given up on.
  constexpr int kBlockingWaitMs = 10'000;
  const auto received = read_server_wait_status(server_status_fd_, block ? kBlockingWaitMs : 0);
  if (!received) {
    return block ? -1 : 0;
  }
  status = *received;
  close_fd(server_status_fd_);
  return pid_;
}

std::optional<WorkerProcess> WorkerProcess::start_on_server(const WorkerLaunch& launch, int request_read,
                                                            int reply_write, int log_write, int request_write,
                                                            int reply_read, int log_read) {
  const auto folder = fork_server_folder();
  if (!folder) {
    return std::nullopt;
  }
  const auto started =
      start_on_fork_server(*folder, launch, ForkedWorkerFds{log_write, request_read, reply_write});
  if (!started) {
    return std::nullopt;
  }
  for (int fd : {request_read, reply_write, log_write}) {
    ::close(fd);
  }
  WorkerProcess process(started->pid, request_write, reply_read, log_read);
  process.server_status_fd_ = started->status_fd;
  return process;
}

}  // namespace kforge::runner
