#include "runner/program_pause.hpp"

#include <csignal>

namespace kforge::runner {

void ProgramPause::attach(pid_t group) {
  const std::lock_guard lock(mutex_);
  group_ = group;
  if (paused_ && group_ > 0) {
    kill(-group_, SIGSTOP);
  }
}

void ProgramPause::detach() {
  const std::lock_guard lock(mutex_);
  group_ = -1;
}

void ProgramPause::pause() {
  const std::lock_guard lock(mutex_);
  paused_ = true;
  ++pauses_;
  if (group_ > 0) {
    kill(-group_, SIGSTOP);
  }
}

void ProgramPause::resume() {
  const std::lock_guard lock(mutex_);
  paused_ = false;
  if (group_ > 0) {
    kill(-group_, SIGCONT);
  }
}

int ProgramPause::pauses() const {
  const std::lock_guard lock(mutex_);
  return pauses_;
}

}  // namespace kforge::runner
