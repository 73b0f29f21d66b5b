#pragma once

#include <csignal>
#include <string>
#include <thread>

namespace kforge::runner {

// The exit code of a run stopped by `signal`: 128 + its number (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
int interrupted_exit_code(int signal);

// While alive, SIGINT, SIGTERM and SIGHUP stop kforge cleanly: the handler only writes the signal's
// number into a pipe; a watcher thread reads it, stops every worker and program kforge started, removes
// its scratch folders and shared memory (CleanupRegistry), says so on stderr as "<label>: interrupted
// by SIGINT; ..." and exits with interrupted_exit_code. Whatever the main thread was waiting on (a
// worker, the GPU, a network reply) cannot delay this. One at a time per process.
class InterruptHandling {
 public:
  explicit InterruptHandling(std::string label);
  InterruptHandling(const InterruptHandling&) = delete;
  InterruptHandling& operator=(const InterruptHandling&) = delete;
  InterruptHandling(InterruptHandling&&) = delete;
  InterruptHandling& operator=(InterruptHandling&&) = delete;
  ~InterruptHandling();  // restores the default actions and ends the watcher

 private:
  void watch() const;

  std::string label_;
  int read_fd_ = -1;
  int write_fd_ = -1;
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
  struct sigaction previous_hup_ {};
  std::thread watcher_;
};

}  // namespace kforge::runner
