#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runner/gpu_gate.hpp"
#include "schedule/eval_job.hpp"
#include "schedule/eval_scheduler.hpp"

namespace kforge::schedule {

// What the engine has done so far and what it holds now (for progress and the service's metrics).
struct EngineCounters {
  std::size_t queued = 0;           // jobs waiting for a worker thread
  std::size_t running = 0;          // jobs being evaluated
  std::size_t finished = 0;         // results delivered, stored and screened ones included
  std::size_t screened = 0;         // decided by extract and static rules alone, without a judge
  std::size_t from_store = 0;       // answered from the result store
  std::size_t retries = 0;          // jobs run again after their judge or worker was lost
  std::size_t judges_alive = 0;     // judges started and not yet stopped (busy or kept warm)
  std::size_t judge_room = 0;       // judges that may be alive at once per device (at least its jobs)
  std::size_t judge_starts = 0;     // judges started
  std::size_t judge_restarts = 0;   // judges replaced after they died under an evaluation
  std::size_t zygote_starts = 0;    // candidate zygotes started
  std::size_t zygote_restarts = 0;  // of those, started because the device's previous one was lost
  std::map<std::string, double> timing_busy_s;  // per GPU: seconds timing held it exclusively
};

using ResultCallback = std::function<void(const EvalOutcome&)>;

// The evaluation engine as a long-lived object: worker threads per device, one judge per (device,
// problem) kept warm after its jobs are done (the least recently used idle one makes room), one
// candidate zygote and one GPU gate and memory budget per device, all shared by every submission.
// A submission's stored verdicts and the candidates that extract and the static rules reject are
// answered in `submit` itself; the rest are queued, taken round-robin over problems. A job whose judge
// or worker was lost for a reason not its own is retried once; nothing is dropped.
class EvalEngine {
 public:
  // Starts the worker threads; probes each device's environment when there is a store.
  explicit EvalEngine(SchedulerOptions options);
  // Finishes everything submitted, then stops the threads, judges and zygotes.
  ~EvalEngine();
  EvalEngine(const EvalEngine&) = delete;
  EvalEngine& operator=(const EvalEngine&) = delete;
  EvalEngine(EvalEngine&&) = delete;
  EvalEngine& operator=(EvalEngine&&) = delete;

  // Queues the jobs. `on_result` is called once per job, `on_done` once after the last; both are
  // serialised with every other callback of the engine and may run inside this call (stored and
  // screened jobs) or on a worker thread. The callbacks must not throw.
  void submit(std::vector<EvalJob> jobs, ResultCallback on_result, std::function<void()> on_done = {});
  // Returns once every job submitted so far has been delivered.
  void wait_idle();
  EngineCounters counters() const;
  // The device's GPU gate (null for the CPU or a device the engine does not use): work done next to the
  // engine's evaluations on that GPU (a TritonBench file run) holds it shared, so it never overlaps timing.
  runner::GpuGate* gate(const std::string& device);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kforge::schedule
