#include "runner/fork_server.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>
#include <system_error>
#include <vector>

#include "runner/descriptor_passing.hpp"
#include "runner/environment_variable.hpp"
#include "runner/exec_arguments.hpp"

namespace kforge::runner {
namespace {

constexpr int kReplyTimeoutMs = 10'000;
constexpr std::size_t kMaxLineBytes = 4096;
// The trusted workers a server may fork (MODULES in kforge/worker/fork_server.py): the judge, and the
// wrapper probe and test-block capture of kernel mode, which run the user's own reference file outside
// the sandbox as a judge does. Never a zygote: its programs must be re-parented to kforge.
constexpr std::array<std::string_view, 2> kServedModules = {"kforge.worker.judge",
                                                            "kforge.worker.kernel_capture"};

// A variable that names one evaluation's own folder: it differs between the launches a server serves
// (PER_LAUNCH in kforge/worker/fork_server.py, which checks the same rule on its side).
bool names_evaluation_folder(const std::string& name) {
  return name == "TMPDIR" || name == "TRITON_CACHE_DIR";
}

// The environment less the per-evaluation folders, sorted: what a server must have been started with.
std::vector<std::string> comparable_environment(const WorkerLaunch& launch) {
  const bool no_user_site = std::ranges::any_of(
      launch.environment, [](const auto& entry) { return entry.first == "PYTHONNOUSERSITE"; });
  std::vector<std::string> entries;
  entries.reserve(launch.environment.size());
  for (const auto& [name, value] : launch.environment) {
    if (names_evaluation_folder(name) || (no_user_site && name == "HOME")) {
      continue;
    }
    entries.push_back(environment_entry(name, value));
  }
  std::ranges::sort(entries);
  return entries;
}

// FNV-1a: a stable name for an environment (std::hash may differ between builds).
std::uint64_t fnv1a(std::string_view text, std::uint64_t hash) {
  constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  for (const char byte : text) {
    hash ^= static_cast<unsigned char>(byte);
    hash *= kPrime;
  }
  return hash;
}

// Connects through /proc/self/fd/N/NAME, N an O_PATH descriptor of the folder: a socket address holds at
// most 107 bytes, and the folder (a pytest temporary folder, a home directory) may be longer than that.
int connect_to(const std::filesystem::path& path) {
  const int folder = open(path.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (folder < 0) {
    return -1;
  }
  const auto short_path = fmt::format("/proc/self/fd/{}/{}", folder, path.filename().string());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const bool fits = short_path.size() < sizeof address.sun_path;
  if (fits) {
    std::memcpy(&address.sun_path[0], short_path.c_str(), short_path.size() + 1);
  }
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API takes a sockaddr*
  const auto* generic = reinterpret_cast<const sockaddr*>(&address);
  const bool connected = fd >= 0 && fits && connect(fd, generic, sizeof address) == 0;
  ::close(folder);
  if (!connected) {
    if (fd >= 0) {
      ::close(fd);
    }
    return -1;
  }
  return fd;
}

bool send_with_fds(int socket_fd, const std::string& line, const ForkedWorkerFds& fds) {
  const std::array<int, 3> passed{fds.log, fds.requests, fds.replies};
  return send_with_descriptors(socket_fd, line, passed) == static_cast<ssize_t>(line.size());
}

// One line from the server, read byte by byte so nothing after it is consumed; nullopt on timeout.
// An empty string: the server closed the connection.
std::optional<std::string> read_line(int fd, int timeout_ms) {
  std::string line;
  while (line.size() < kMaxLineBytes) {
    pollfd entry{fd, POLLIN, 0};
    const int ready = poll(&entry, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      return std::nullopt;
    }
    char byte = 0;
    const auto count = read(fd, &byte, 1);
    if (count < 0 && errno == EINTR) {
      continue;
    }
    if (count <= 0 || byte == '\n') {
      return line;
    }
    line.push_back(byte);
  }
  return std::string();
}

// Starts a server for `launch`'s environment in the background, detached from this kforge (its own
// session, no death signal), logging next to its socket. Everything is prepared before the fork: kforge
// may have threads, so the children make only async-signal-safe calls.
void start_server(const std::filesystem::path& folder, const std::filesystem::path& socket_path,
                  const WorkerLaunch& launch) {
  WorkerLaunch server;
  server.executable = launch.executable;
  server.arguments = {
      "-X",       "faulthandler",       "-m",     "kforge.worker.fork_server",
      "--socket", socket_path.string(), "--idle", fmt::format("{:.0f}", kForkServerIdleSeconds)};
  for (const auto& [name, value] : launch.environment) {
    if (!names_evaluation_folder(name)) {
      server.environment.emplace_back(name, value);
    }
  }
  server.environment.emplace_back("TMPDIR", folder.string());
  server.environment.emplace_back("TRITON_CACHE_DIR", (folder / "triton-cache").string());
  const ExecArguments exec(server);
  const std::string log_path = socket_path.string() + ".log";
  const std::string working_dir = folder.string();
  const pid_t middle = fork();
  if (middle < 0) {
    return;
  }
  if (middle == 0) {
    setsid();
    if (fork() == 0) {
      const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
      const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (null >= 0 && log >= 0 && dup2(null, STDIN_FILENO) >= 0 && dup2(log, STDOUT_FILENO) >= 0 &&
          dup2(log, STDERR_FILENO) >= 0 && chdir(working_dir.c_str()) == 0) {
        close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
        execve(exec.argv()[0], exec.argv(), exec.envp());
      }
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::optional<std::filesystem::path> fork_server_folder() {
  const std::string configured = environment_variable(kForkServerVariable);
  if (configured.empty()) {
    return std::nullopt;
  }
  const std::filesystem::path folder = std::filesystem::absolute(configured);
  std::error_code error;
  if (!std::filesystem::exists(folder, error) && mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
    return std::nullopt;
  }
  struct stat info {};
  // Only a folder of this user's that nobody else may write into: its sockets start judges.
  if (stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != getuid() ||
      (info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return std::nullopt;
  }
  return folder;
}

bool fork_server_may_start(const WorkerLaunch& launch) {
  const auto& arguments = launch.arguments;
  return !launch.sandbox && !launch.hidden_reply_channel && arguments.size() >= 4 && arguments[0] == "-X" &&
         arguments[1] == "faulthandler" && arguments[2] == "-m" &&
         std::ranges::find(kServedModules, arguments[3]) != kServedModules.end();
}

std::filesystem::path fork_server_socket(const std::filesystem::path& folder, const WorkerLaunch& launch) {
  constexpr std::uint64_t kOffsetBasis = 0xcbf29ce484222325ULL;
  std::uint64_t hash = fnv1a(launch.executable.string(), kOffsetBasis);
  for (const auto& entry : comparable_environment(launch)) {
    hash = fnv1a(std::string_view("\0", 1), fnv1a(entry, hash));
  }
  return folder / fmt::format("judge-{:016x}.sock", hash);
}

std::optional<ServerStartedWorker> start_on_fork_server(const std::filesystem::path& folder,
                                                        const WorkerLaunch& launch,
                                                        const ForkedWorkerFds& fds) {
  const auto socket_path = fork_server_socket(folder, launch);
  if (!fork_server_may_start(launch)) {
    return std::nullopt;
  }
  const int connection = connect_to(socket_path);
  if (connection < 0) {
    start_server(folder, socket_path, launch);
    return std::nullopt;
  }
  nlohmann::json environment = nlohmann::json::array();
  for (const auto& [name, value] : launch.environment) {
    environment.push_back({name, value});
  }
  const nlohmann::json request = {{"executable", launch.executable.string()},
                                  {"arguments", launch.arguments},
                                  {"environment", environment},
                                  {"working_directory", launch.working_directory.string()}};
  if (!send_with_fds(connection, request.dump() + "\n", fds)) {
    ::close(connection);
    return std::nullopt;
  }
  const auto line = read_line(connection, kReplyTimeoutMs);
  const auto reply = nlohmann::json::parse(line.value_or(""), nullptr, false);
  // A pid of 0 or below would make kforge signal its own group: only a real process is taken.
  if (!reply.is_object() || !reply.contains("pid") || !reply["pid"].is_number_integer() ||
      reply["pid"].get<long long>() <= 1) {
    ::close(connection);  // the server kills a worker it forked once this connection closes
    return std::nullopt;
  }
  return ServerStartedWorker{reply["pid"].get<pid_t>(), connection};
}

std::optional<int> read_server_wait_status(int status_fd, int timeout_ms) {
  const auto line = read_line(status_fd, timeout_ms);
  if (!line) {
    return std::nullopt;
  }
  const auto reply = nlohmann::json::parse(*line, nullptr, false);
  if (reply.is_object() && reply.contains("status") && reply["status"].is_number_integer()) {
    return reply["status"].get<int>();
  }
  return SIGKILL;  // the server is gone without a word: as if the worker had been killed
}

}  // namespace kforge::runner
