#include "runner/command_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "runner/cleanup_registry.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX, for posix_spawn

namespace kforge::runner {
namespace {

constexpr std::size_t kMaxErrBytes = std::size_t{64} * 1024;

// Reads both pipes until both are closed, so neither side can fill up and block the child.
void drain(int out_fd, int err_fd, std::string& out, std::string& err) {
  std::array<pollfd, 2> fds{{{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}}};
  std::array<char, 4096> buffer{};
  std::size_t open = 2;
  while (open > 0) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds.at(i).fd < 0 || fds.at(i).revents == 0) {
        continue;
      }
      const ssize_t got = read(fds.at(i).fd, buffer.data(), buffer.size());
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got <= 0) {
        fds.at(i).fd = -1;
        --open;
        continue;
      }
      auto& target = i == 0 ? out : err;
      target.append(buffer.data(), static_cast<std::size_t>(got));
      if (i == 1 && err.size() > kMaxErrBytes) {
        err.erase(0, err.size() - kMaxErrBytes);
      }
    }
  }
}

}  // namespace

const std::string& CommandOutput::checked_output() const {
  if (exit_code != 0) {
    throw std::runtime_error(command + " failed (exit " + std::to_string(exit_code) + "): " + err);
  }
  return out;
}

CommandOutput run_command(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    throw std::invalid_argument("run_command needs a program to run");
  }
  std::array<int, 2> out_pipe{};
  std::array<int, 2> err_pipe{};
  if (pipe2(out_pipe.data(), O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  }
  if (pipe2(err_pipe.data(), O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  }
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv.front().c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  CommandOutput result;
  result.command = argv.front();
  if (spawned != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw std::runtime_error("cannot run " + argv.front() + ": " + std::strerror(spawned));
  }
  CleanupRegistry::instance().add_process(pid);
  drain(out_pipe[0], err_pipe[0], result.out, result.err);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  CleanupRegistry::instance().forget_process(pid);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace kforge::runner
