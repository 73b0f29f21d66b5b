#include "schedule/eval_engine.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "runner/candidate_zygote.hpp"
#include "runner/environment_probe.hpp"
#include "runner/gpu_gate.hpp"
#include "runner/gpu_memory_budget.hpp"
#include "schedule/evaluation_identity.hpp"
#include "schedule/parallel_screening.hpp"
#include "verify/eval_pipeline.hpp"
#include "verify/gpu_memory_share.hpp"
#include "verify/problem_session.hpp"
#include "verify/timed_values.hpp"

namespace kforge::schedule {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxAttempts = 2;
constexpr int kZygoteStarts = 3;                  // a zygote that keeps dying is given up on
constexpr double kUsableMemoryShare = 0.8;        // of the free memory the first judge saw
constexpr std::chrono::seconds kTrimTimeout{60};  // an idle judge shrinking its cache (a sync and a free)

// The caller's side of one submit: its callbacks and how many of its jobs are still to deliver.
struct Submission {
  ResultCallback on_result;
  std::function<void()> on_done;
  std::size_t remaining = 0;  // guarded by the engine's delivery mutex
};

struct QueuedJob {
  EvalJob job;
  std::shared_ptr<Submission> submission;
  std::optional<store::EvaluationIdentity> identity;  // where its verdict is stored (none: not stored)
};

// One problem's judge on one device, shared by the threads evaluating its candidates there, and kept
// warm once they are done until another problem needs the room.
struct SessionSlot {
  std::mutex mutex;  // held while the session starts, so one judge starts per slot
  std::shared_ptr<verify::ProblemSession> session;
  std::uint64_t stored_baseline_version = 0;
  std::size_t running = 0;        // guarded by the scheduling mutex
  Clock::time_point last_used{};  // guarded by the scheduling mutex
};

struct ProblemQueue {
  std::string key;
  std::deque<QueuedJob> jobs;
  std::map<std::string, std::shared_ptr<SessionSlot>> slots;  // by device
};

struct Assignment {
  QueuedJob item;
  ProblemQueue* queue;
  std::shared_ptr<SessionSlot> slot;
  std::vector<std::shared_ptr<verify::ProblemSession>> evicted;  // idle judges stopped for room, unlocked
};

struct ZygoteSlot {
  std::mutex mutex;
  std::shared_ptr<runner::CandidateZygote> zygote;
  int starts = 0;
};

struct DeviceState {
  runner::GpuGate gate;
  runner::GpuMemoryBudget budget;
  ZygoteSlot zygote;
  std::size_t sessions = 0;  // judges alive on this device (guarded by the scheduling mutex)
  std::size_t running = 0;   // evaluations in flight here (guarded by the scheduling mutex)
  bool alone = false;        // a retry that runs with nothing beside it is in flight here
};

// A job retried because the machine failed it (out of GPU memory while other evaluations held it) runs
// alone on its device: no other evaluation starts beside it, and idle judges are stopped first.
constexpr const char* kAloneTag = "_alone";

bool runs_alone(const QueuedJob& item) { return item.job.tags.value(kAloneTag, false); }

// What one evaluation may use on the GPU: the candidate's capped share, its CUDA context and the judge's
// working set (verify::evaluation_gpu_memory), plus the timing's value sets (each set's inputs, and the
// whole output the candidate keeps for it). No load reply (the problem failed to load): the evaluation
// reports that, and reserves the minimum.
std::uint64_t evaluation_memory(const nlohmann::json& load, bool reference_beside) {
  const std::uint64_t total =
      load.is_object() && load.contains("gpu_memory") && load["gpu_memory"].is_object()
          ? load["gpu_memory"].value("total", std::uint64_t{0})
          : 0;
  const auto footprint = verify::ProblemFootprint::from_load_reply(load);
  const auto set_bytes = footprint.input_bytes + footprint.output_bytes;
  return verify::evaluation_gpu_memory(footprint, total, reference_beside) +
         verify::timing_value_sets(set_bytes) * set_bytes;
}

std::string error_kind(const EvalOutcome& outcome) {
  return outcome.verdict.contains("error") && outcome.verdict["error"].is_object()
             ? outcome.verdict["error"].value("kind", "")
             : "";
}

bool worth_retrying(const EvalOutcome& outcome) {
  if (outcome.verdict.value("outcome", "") != "error" || outcome.attempts >= kMaxAttempts) {
    return false;
  }
  if (outcome.judge_lost) {
    return true;  // the judge died under this evaluation: a new judge gets one more try
  }
  const auto kind = error_kind(outcome);
  return kind != "usage" && kind != "problem";
}

// A failure inside kforge while evaluating one job, as that job's error verdict.
nlohmann::json internal_error_verdict(const std::string& message) {
  return verify::error_verdict_json({"internal", message});
}

}  // namespace

class EvalEngine::Impl {
 public:
  explicit Impl(SchedulerOptions options) : options_(std::move(options)) {
    if (options_.devices.empty() || options_.jobs_per_device == 0 || options_.sessions_per_device == 0) {
      throw std::invalid_argument("the engine needs at least one device, job and session per device");
    }
    // Every evaluation in flight needs its problem's judge: with fewer judges than jobs, a batch of one
    // answer per problem (TritonBench, a KernelBench level) ran only that many at once whatever -j said.
    options_.sessions_per_device = std::max(options_.sessions_per_device, options_.jobs_per_device);
    python_ = runner::find_python_environment(options_.python);
    for (const auto& device : options_.devices) {
      facts_[device] = options_.store != nullptr ? runner::probe_environment(python_, device)
                                                 : runner::EnvironmentFacts{device, {}};
      devices_[device] = std::make_unique<DeviceState>();
    }
    for (const auto& device : options_.devices) {
      for (std::size_t i = 0; i < options_.jobs_per_device; ++i) {
        threads_.emplace_back([this, device] { work(device); });
      }
    }
  }

  ~Impl() {
    wait_idle();
    {
      const std::lock_guard lock(mutex_);
      closing_ = true;
    }
    changed_.notify_all();
    for (auto& thread : threads_) {
      thread.join();
    }
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  Impl(Impl&&) = delete;
  Impl& operator=(Impl&&) = delete;

  void submit(std::vector<EvalJob> jobs, ResultCallback on_result, std::function<void()> on_done) {
    auto submission = std::make_shared<Submission>();
    submission->on_result = std::move(on_result);
    submission->on_done = std::move(on_done);
    submission->remaining = jobs.size();
    if (jobs.empty()) {
      const std::lock_guard lock(deliver_mutex_);
      if (submission->on_done) {
        submission->on_done();
      }
      return;
    }
    {
      const std::lock_guard lock(mutex_);
      outstanding_ += jobs.size();
    }
    // The completions are screened on parallel threads first (an RL group waits for its slowest).
    std::vector<std::optional<verify::Verdict>> screened(jobs.size());
    if (options_.screen_first) {
      screened = screening_pool_.screen(jobs, options_.devices.front());
    }
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      QueuedJob item{std::move(jobs[i]), submission, std::nullopt};
      try {
        admit(item, std::move(screened[i]));
      } catch (const std::exception& error) {  // the job is still answered, so waiters never hang
        const auto& queued = item.job;
        deliver(item, {queued.index, queued.problem, queued.tags, internal_error_verdict(error.what()),
                       options_.devices.front(), false, kMaxAttempts, 0.0});
      }
    }
  }

  void wait_idle() {
    std::unique_lock lock(mutex_);
    drained_.wait(lock, [this] { return outstanding_ == 0; });
  }

  runner::GpuGate* gate(const std::string& device) {
    const auto found = devices_.find(device);
    return device == "cpu" || found == devices_.end() ? nullptr : &found->second->gate;
  }

  EngineCounters counters() const {
    EngineCounters counters;
    {
      const std::lock_guard lock(mutex_);
      counters = counters_;
      counters.queued = queued_;
      counters.running = running_;
      counters.judge_room = options_.sessions_per_device;
      counters.judges_alive = 0;
      for (const auto& [device, state] : devices_) {
        counters.judges_alive += state->sessions;
      }
    }
    for (const auto& [device, state] : devices_) {
      if (device != "cpu") {
        counters.timing_busy_s[device] = state->gate.exclusive_seconds();
      }
    }
    return counters;
  }

 private:
  // Answers the job with its screening verdict (`screened`, from the screening pool) or from the store
  // when it can, otherwise queues it. Screening verdicts are not stored: recomputing one (about a
  // millisecond, no Python) is cheaper than hashing the job's files and a store round trip.
  void admit(QueuedJob& item, std::optional<verify::Verdict> screened) {
    const auto& device = options_.devices.front();
    if (screened) {
      count([](EngineCounters& counters) { ++counters.screened; });
      const auto& job = item.job;
      deliver(item, {job.index, job.problem, job.tags, verify::to_json(*screened), device, false, 1,
                     screened->duration_s});
      return;
    }
    if (options_.store != nullptr) {
      try {
        item.identity = evaluation_identity(item.job.settings, facts_.at(device));
      } catch (const std::exception&) {  // an unreadable file: the evaluation reports it
      }
    }
    if (item.identity && options_.reuse_stored) {
      std::optional<nlohmann::json> stored;
      try {
        stored = options_.store->find_verdict(*item.identity);
      } catch (const std::exception&) {  // an unreadable row: evaluate again
      }
      if (stored) {
        count([](EngineCounters& counters) { ++counters.from_store; });
        const auto& job = item.job;
        deliver(item, {job.index, job.problem, job.tags, std::move(*stored), device, true, 0, 0.0});
        return;
      }
    }
    enqueue(std::move(item), false);
  }

  void enqueue(QueuedJob item, bool at_front) {
    {
      const std::lock_guard lock(mutex_);
      const auto key = verify::ProblemSession::key_of(item.job.settings);
      auto found =
          std::find_if(queues_.begin(), queues_.end(), [&](const auto& queue) { return queue->key == key; });
      if (found == queues_.end()) {
        queues_.push_back(std::make_unique<ProblemQueue>());
        queues_.back()->key = key;
        found = std::prev(queues_.end());
      }
      if (at_front) {
        (*found)->jobs.push_front(std::move(item));
      } else {
        (*found)->jobs.push_back(std::move(item));
      }
      ++queued_;
    }
    changed_.notify_all();
  }

  void count(const std::function<void(EngineCounters&)>& change) {
    const std::lock_guard lock(mutex_);
    change(counters_);
  }

  void work(const std::string& device) {
    while (auto assignment = next(device)) {
      assignment->evicted.clear();  // stops the judges that made room, outside the lock
      const auto start = Clock::now();
      auto outcome = evaluate_or_report(*assignment, device);
      outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      finish(*assignment, device, std::move(outcome));
    }
  }

  // The next job for this device, round-robin over problems whose judge lives here or may start here
  // (evicting the least recently used idle judge when the device has no room). Null once closing.
  std::optional<Assignment> next(const std::string& device) {
    std::unique_lock lock(mutex_);
    auto& state = *devices_.at(device);
    while (true) {
      if (queued_ == 0 && closing_) {
        return std::nullopt;
      }
      const bool alone_waiting = std::ranges::any_of(
          queues_, [](const auto& queue) { return !queue->jobs.empty() && runs_alone(queue->jobs.front()); });
      // While a retry waits to run alone, no other evaluation starts; it starts once its device is idle.
      for (std::size_t step = 0; queued_ > 0 && !state.alone && step < queues_.size(); ++step) {
        auto& queue = *queues_[(cursor_ + step) % queues_.size()];
        if (queue.jobs.empty() || (alone_waiting && (!runs_alone(queue.jobs.front()) || state.running > 0))) {
          continue;
        }
        std::vector<std::shared_ptr<verify::ProblemSession>> evicted;
        if (runs_alone(queue.jobs.front())) {
          evict_every_idle(device, &queue, evicted);
        }
        const auto found = queue.slots.find(device);
        auto slot = found == queue.slots.end() ? nullptr : found->second;
        if (!slot) {
          if (state.sessions >= options_.sessions_per_device && !evict_idle(device, evicted)) {
            continue;
          }
          slot = std::make_shared<SessionSlot>();
          queue.slots[device] = slot;
          ++state.sessions;
        }
        cursor_ = (cursor_ + step + 1) % queues_.size();
        ++slot->running;
        ++running_;
        ++state.running;
        state.alone = runs_alone(queue.jobs.front());
        --queued_;
        Assignment assignment{std::move(queue.jobs.front()), &queue, slot, std::move(evicted)};
        queue.jobs.pop_front();
        return assignment;
      }
      changed_.wait(lock);  // nothing queued, or every runnable problem needs a judge and no room yet
    }
  }

  // Called with the scheduling mutex held: frees every idle judge of this device but `keep`'s (a retry
  // that runs alone gets the memory they held).
  void evict_every_idle(const std::string& device, const ProblemQueue* keep,
                        std::vector<std::shared_ptr<verify::ProblemSession>>& evicted) {
    for (const auto& queue : queues_) {
      const auto found = queue->slots.find(device);
      if (queue.get() == keep || found == queue->slots.end() || found->second->running > 0 ||
          !queue->jobs.empty()) {
        continue;
      }
      evicted.push_back(std::move(found->second->session));
      queue->slots.erase(found);
      --devices_.at(device)->sessions;
    }
    prune();
  }

  // Called with the scheduling mutex held: frees the least recently used idle judge of this device.
  bool evict_idle(const std::string& device, std::vector<std::shared_ptr<verify::ProblemSession>>& evicted) {
    ProblemQueue* oldest = nullptr;
    for (const auto& queue : queues_) {
      const auto found = queue->slots.find(device);
      if (found == queue->slots.end() || found->second->running > 0 || !queue->jobs.empty()) {
        continue;
      }
      if (oldest == nullptr || found->second->last_used < oldest->slots.at(device)->last_used) {
        oldest = queue.get();
      }
    }
    if (oldest == nullptr) {
      return false;
    }
    evicted.push_back(std::move(oldest->slots.at(device)->session));
    oldest->slots.erase(device);
    --devices_.at(device)->sessions;
    prune();
    return true;
  }

  // Called with the scheduling mutex held: forgets problems with nothing queued and no judge.
  void prune() {
    const auto before = queues_.size();
    std::erase_if(queues_, [](const auto& queue) { return queue->jobs.empty() && queue->slots.empty(); });
    if (queues_.size() != before) {
      cursor_ = queues_.empty() ? 0 : cursor_ % queues_.size();
    }
  }

  std::shared_ptr<verify::ProblemSession> session_for(SessionSlot& slot, const EvalJob& job,
                                                      const std::string& device) {
    const std::lock_guard lock(slot.mutex);
    if (!slot.session) {
      slot.session = std::make_shared<verify::ProblemSession>(job.settings);
      slot.stored_baseline_version = 0;
      count([](EngineCounters& counters) { ++counters.judge_starts; });
      if (options_.store != nullptr && slot.session->on_gpu() && !slot.session->load_error()) {
        try {
          auto stored = options_.store->find_baseline(baseline_identity(job.settings, facts_.at(device)));
          auto baseline = stored ? verify::Baseline::from_json(*stored) : std::nullopt;
          if (baseline && baseline->kind == job.settings.baseline) {
            slot.session->set_baseline(*baseline);
            slot.stored_baseline_version = slot.session->baseline_version();
          }
        } catch (const std::exception&) {  // an unreadable store row: measure again
        }
      }
    }
    return slot.session;
  }

  // A failure inside kforge while evaluating one job becomes that job's error verdict: it must not
  // end the worker thread (std::terminate would lose every result in flight).
  EvalOutcome evaluate_or_report(Assignment& assignment, const std::string& device) {
    try {
      return evaluate(assignment, device);
    } catch (const std::exception& error) {
      const auto& job = assignment.item.job;
      return {job.index, job.problem, job.tags,     internal_error_verdict(error.what()),
              device,    false,       kMaxAttempts, 0.0};
    }
  }

  EvalOutcome evaluate(Assignment& assignment, const std::string& device) {
    auto& job = assignment.item.job;
    job.settings.device = device;
    EvalOutcome outcome{job.index, job.problem, job.tags, {}, device, false, 0, 0.0};
    outcome.attempts = job.tags.value("_attempt", 0) + 1;
    auto& state = *devices_.at(device);
    const auto session = session_for(*assignment.slot, job, device);
    auto* gate = device == "cpu" ? nullptr : &state.gate;
    auto* budget = device == "cpu" ? nullptr : &state.budget;
    const auto& load = session->load_reply();
    if (budget != nullptr && load.is_object() && load.contains("gpu_memory") &&
        load["gpu_memory"].is_object()) {
      budget->set_capacity_once(
          static_cast<std::uint64_t>(kUsableMemoryShare * load["gpu_memory"].value("free", 0.0)));
    }
    const auto zygote = zygote_for(device, job.settings);
    const runner::GpuMemoryBudget::Reservation reservation(
        budget, evaluation_memory(load, job.settings.reference_beside));
    const auto verdict = verify::evaluate_in_session(job.settings, *session, gate, zygote.get());
    outcome.verdict = verify::to_json(verdict);
    outcome.judge_lost = session->lost() && !session->load_error();
    // A problem that failed to load for want of GPU memory loads again when the job is retried.
    const bool load_failed_on_machine = session->load_error() && session->load_error()->kind == "environment";
    if (outcome.judge_lost || load_failed_on_machine) {
      if (outcome.judge_lost) {
        count([](EngineCounters& counters) { ++counters.judge_restarts; });
      }
      const std::lock_guard lock(assignment.slot->mutex);
      if (assignment.slot->session == session) {
        assignment.slot->session.reset();  // the next job of this problem starts a new judge
      }
    } else if (options_.store != nullptr && session->on_gpu()) {
      store_baseline(*assignment.slot, *session, job.settings, device);
    }
    return outcome;
  }

  void store_baseline(SessionSlot& slot, verify::ProblemSession& session,
                      const verify::EvalSettings& settings, const std::string& device) {
    const auto version = session.baseline_version();
    const auto baseline = session.baseline();
    if (!baseline || version == slot.stored_baseline_version) {
      return;
    }
    try {
      options_.store->put_baseline(baseline_identity(settings, facts_.at(device)), baseline->to_json());
      slot.stored_baseline_version = version;
    } catch (const std::exception&) {  // the store is a cache: a failed write costs a re-measurement
    }
  }

  void finish(Assignment& assignment, const std::string& device, EvalOutcome outcome) {
    bool retry = false;
    std::shared_ptr<verify::ProblemSession> idle;
    {
      const std::lock_guard lock(mutex_);
      auto& slot = *assignment.slot;
      --slot.running;
      --running_;
      auto& state = *devices_.at(device);
      --state.running;
      state.alone = state.alone && !runs_alone(assignment.item);
      slot.last_used = Clock::now();
      retry = worth_retrying(outcome);
      if (retry) {
        ++counters_.retries;
      }
      if (!retry && slot.running == 0 && assignment.queue->jobs.empty()) {
        if (slot.session) {
          idle = slot.session;  // warm, with nothing queued: it gives back what it cached
        } else {
          assignment.queue->slots.erase(device);  // its judge was lost: nothing warm to keep
          --devices_.at(device)->sessions;
          prune();
        }
      }
    }
    if (retry) {
      auto item = std::move(assignment.item);
      item.job.tags["_attempt"] = outcome.attempts;
      item.job.tags[kAloneTag] = error_kind(outcome) == "environment";
      enqueue(std::move(item), true);
      return;
    }
    outcome.tags.erase("_attempt");
    outcome.tags.erase(kAloneTag);
    deliver(assignment.item, std::move(outcome));
    changed_.notify_all();
    if (idle && !idle->lost()) {
      idle->trim(kTrimTimeout);  // after the result is out; a job arriving meanwhile waits on the session
    }
  }

  // Stores the verdict (errors are not the candidate's: never stored), hands it to the submission's
  // callback and counts it delivered.
  void deliver(const QueuedJob& item, EvalOutcome outcome) {
    {
      const std::lock_guard lock(deliver_mutex_);
      if (options_.store != nullptr && !outcome.from_store && item.identity &&
          outcome.verdict.value("outcome", "") != "error") {
        try {
          options_.store->put_verdict(*item.identity, outcome.verdict);
        } catch (const std::exception& error) {
          outcome.verdict["store_error"] = error.what();  // the result still reaches the caller
        }
      }
      auto& submission = *item.submission;
      if (submission.on_result) {
        submission.on_result(outcome);
      }
      if (--submission.remaining == 0 && submission.on_done) {
        submission.on_done();
      }
    }
    bool drained = false;
    {
      const std::lock_guard lock(mutex_);
      ++counters_.finished;
      drained = --outstanding_ == 0;
    }
    // Only wait_idle() waits for deliveries: waking the workers here would cost every screened
    // completion a round of context switches for nothing.
    if (drained) {
      drained_.notify_all();
    }
  }

  // This device's zygote, started on first use and replaced when lost; null when it cannot start (then
  // candidates start fresh). Shared: a thread keeps the one it forked from alive while it replaces it.
  std::shared_ptr<runner::CandidateZygote> zygote_for(const std::string& device,
                                                      const verify::EvalSettings& settings) {
    if (!options_.use_zygote) {
      return nullptr;
    }
    auto& slot = devices_.at(device)->zygote;
    const std::lock_guard lock(slot.mutex);
    if (slot.zygote && !slot.zygote->lost()) {
      return slot.zygote;
    }
    if (slot.starts >= kZygoteStarts) {
      return nullptr;
    }
    const bool restart = slot.starts > 0;
    ++slot.starts;
    count([restart](EngineCounters& counters) {
      ++counters.zygote_starts;
      counters.zygote_restarts += restart ? 1 : 0;
    });
    try {
      slot.zygote = runner::CandidateZygote::start(python_, device == "cpu", settings.timeout_s);
    } catch (const std::exception&) {
      slot.zygote.reset();  // fresh starts from now on; a real sandbox problem shows in their verdicts
      slot.starts = kZygoteStarts;
    }
    return slot.zygote;
  }

  SchedulerOptions options_;
  // Helpers of the submitting threads: a submission is screened on up to one thread per core.
  ScreeningPool screening_pool_{default_screening_threads() - 1};
  runner::PythonEnvironment python_;
  std::map<std::string, runner::EnvironmentFacts> facts_;
  std::map<std::string, std::unique_ptr<DeviceState>> devices_;
  mutable std::mutex mutex_;         // the scheduling state below
  std::condition_variable changed_;  // workers: a job was queued, a judge freed, or closing
  std::condition_variable drained_;  // wait_idle(): nothing outstanding
  std::vector<std::unique_ptr<ProblemQueue>> queues_;
  std::size_t cursor_ = 0;
  std::size_t queued_ = 0;
  std::size_t running_ = 0;
  std::size_t outstanding_ = 0;  // submitted and not yet delivered
  bool closing_ = false;
  EngineCounters counters_;
  std::mutex deliver_mutex_;  // serialises the store writes and the callbacks
  std::vector<std::thread> threads_;
};

EvalEngine::EvalEngine(SchedulerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

EvalEngine::~EvalEngine() = default;

void EvalEngine::submit(std::vector<EvalJob> jobs, ResultCallback on_result, std::function<void()> on_done) {
  impl_->submit(std::move(jobs), std::move(on_result), std::move(on_done));
}

void EvalEngine::wait_idle() { impl_->wait_idle(); }

EngineCounters EvalEngine::counters() const { return impl_->counters(); }

runner::GpuGate* EvalEngine::gate(const std::string& device) { return impl_->gate(device); }

}  // namespace kforge::schedule
