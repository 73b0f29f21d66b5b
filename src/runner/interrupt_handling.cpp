#include "runner/interrupt_handling.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "runner/cleanup_registry.hpp"

namespace kforge::runner {
namespace {

// The pipe's write end for the handler, which can reach nothing else (-1: no handling installed).
std::atomic<int> interrupt_pipe{-1};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

extern "C" void on_stop_signal(int signal) {
  const int saved = errno;
  const int fd = interrupt_pipe.load();
  if (fd >= 0) {
    const auto byte = static_cast<unsigned char>(signal);
    [[maybe_unused]] const auto written = write(fd, &byte, 1);
  }
  errno = saved;
}

const char* signal_label(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

struct sigaction install(int signal) {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  struct sigaction previous {};
  sigaction(signal, &action, &previous);
  return previous;
}

}  // namespace

int interrupted_exit_code(int signal) { return 128 + signal; }

InterruptHandling::InterruptHandling(std::string label) : label_(std::move(label)) {
  std::array<int, 2> fds{};
  if (pipe2(fds.data(), O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format("cannot create the interrupt pipe: {}", std::strerror(errno)));
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  fcntl(write_fd_, F_SETFL, O_NONBLOCK);  // a burst of signals must never block the handler
  interrupt_pipe.store(write_fd_);
  previous_int_ = install(SIGINT);
  previous_term_ = install(SIGTERM);
  previous_hup_ = install(SIGHUP);
  watcher_ = std::thread([this] { watch(); });
}

InterruptHandling::~InterruptHandling() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
  sigaction(SIGHUP, &previous_hup_, nullptr);
  interrupt_pipe.store(-1);
  const unsigned char stop = 0;  // 0 is no signal: it tells the watcher to end
  [[maybe_unused]] const auto written = write(write_fd_, &stop, 1);
  if (watcher_.joinable()) {
    watcher_.join();
  }
  close(read_fd_);
  close(write_fd_);
}

void InterruptHandling::watch() const {
  unsigned char byte = 0;
  ssize_t got = 0;
  while ((got = read(read_fd_, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (got != 1 || byte == 0) {
    return;
  }
  const int signal = byte;
  const auto cleaned = CleanupRegistry::instance().clean_up_for_exit();
  const auto message = fmt::format(
      "\n{}: interrupted by {}; stopped {} worker process(es) and removed {} scratch folder(s) "
      "(shared memory included)\n",
      label_, signal_label(signal), cleaned.processes, cleaned.folders);
  [[maybe_unused]] const auto written = write(STDERR_FILENO, message.data(), message.size());
  _exit(interrupted_exit_code(signal));
}

}  // namespace kforge::runner
