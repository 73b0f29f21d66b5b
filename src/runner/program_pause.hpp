#pragma once

#include <sys/types.h>

#include <mutex>

#include "runner/gpu_gate.hpp"

namespace kforge::runner {

// A running program's process group as the GPU gate's pausable shared user: SIGSTOP while timing holds
// the GPU, SIGCONT after. The group is attached once the program starts; a pause asked for before that
// stops it as soon as it is attached. Thread-safe (the gate pauses from the timing thread).
class ProgramPause final : public GpuGate::Pausable {
 public:
  ProgramPause() = default;
  ProgramPause(const ProgramPause&) = delete;
  ProgramPause& operator=(const ProgramPause&) = delete;
  ProgramPause(ProgramPause&&) = delete;
  ProgramPause& operator=(ProgramPause&&) = delete;
  ~ProgramPause() override = default;

  void attach(pid_t group);
  void detach();  // before the group is reaped: no signal may reach a reused id
  void pause() override;
  void resume() override;
  int pauses() const;

 private:
  mutable std::mutex mutex_;
  pid_t group_ = -1;
  bool paused_ = false;
  int pauses_ = 0;
};

}  // namespace kforge::runner
