#include "schedule/eval_scheduler.hpp"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "runner/candidate_zygote.hpp"
#include "runner/environment_probe.hpp"
#include "runner/gpu_gate.hpp"
#include "runner/gpu_memory_budget.hpp"
#include "schedule/evaluation_identity.hpp"
#include "verify/eval_pipeline.hpp"
#include "verify/problem_session.hpp"

namespace kforge::schedule {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxAttempts = 2;

// One problem's judge on one device, shared by the threads evaluating its candidates there.
struct SessionSlot {
  std::mutex mutex;  // held while the session starts, so one judge starts per slot
  std::shared_ptr<verify::ProblemSession> session;
  std::uint64_t stored_baseline_version = 0;
  std::size_t running = 0;  // guarded by the batch mutex
};

struct ProblemQueue {
  std::string key;
  std::deque<EvalJob> jobs;
  std::map<std::string, std::shared_ptr<SessionSlot>> slots;  // by device
};

struct Assignment {
  EvalJob job;
  ProblemQueue* queue;
  std::shared_ptr<SessionSlot> slot;
};

// Everything the worker threads of one run share.
class BatchRun {
 public:
  BatchRun(const SchedulerOptions& options, std::map<std::string, runner::EnvironmentFacts> facts,
           runner::PythonEnvironment python)
      : options_(options), facts_(std::move(facts)), python_(std::move(python)) {
    for (const auto& device : options_.devices) {
      gates_[device] = std::make_unique<runner::GpuGate>();
      budgets_[device] = std::make_unique<runner::GpuMemoryBudget>();
      zygotes_[device] = std::make_unique<ZygoteSlot>();
      active_[device] = 0;
    }
  }

  void remember_identity(std::size_t index, store::EvaluationIdentity identity) {
    identities_.emplace(index, std::move(identity));
  }

  void add(EvalJob job) {
    const auto key = verify::ProblemSession::key_of(job.settings);
    auto found =
        std::find_if(queues_.begin(), queues_.end(), [&](const auto& queue) { return queue->key == key; });
    if (found == queues_.end()) {
      queues_.push_back(std::make_unique<ProblemQueue>());
      queues_.back()->key = key;
      found = std::prev(queues_.end());
    }
    (*found)->jobs.push_back(std::move(job));
    ++pending_;
  }

  void work(const std::string& device) {
    while (auto assignment = next(device)) {
      const auto start = Clock::now();
      auto outcome = evaluate_or_report(*assignment, device);
      outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      finish(*assignment, device, std::move(outcome));
    }
  }

  std::vector<EvalOutcome> take_results() { return std::move(results_); }
  void deliver(EvalOutcome outcome) {
    const std::lock_guard lock(mutex_);
    publish(std::move(outcome));
  }

 private:
  // The next job for this device: round-robin over problems whose judge lives here, or may start here.
  std::optional<Assignment> next(const std::string& device) {
    std::unique_lock lock(mutex_);
    while (true) {
      if (pending_ == 0) {
        return std::nullopt;
      }
      for (std::size_t step = 0; step < queues_.size(); ++step) {
        auto& queue = *queues_[(cursor_ + step) % queues_.size()];
        if (queue.jobs.empty()) {
          continue;
        }
        auto& slot = queue.slots[device];
        if (!slot && active_[device] >= options_.sessions_per_device) {
          continue;
        }
        if (!slot) {
          slot = std::make_shared<SessionSlot>();
          ++active_[device];
        }
        cursor_ = (cursor_ + step + 1) % queues_.size();
        ++slot->running;
        Assignment assignment{std::move(queue.jobs.front()), &queue, slot};
        queue.jobs.pop_front();
        return assignment;
      }
      changed_.wait(lock);  // every runnable problem needs a judge and this device has no room yet
    }
  }

  std::shared_ptr<verify::ProblemSession> session_for(SessionSlot& slot, const EvalJob& job,
                                                      const std::string& device) {
    const std::lock_guard lock(slot.mutex);
    if (!slot.session) {
      slot.session = std::make_shared<verify::ProblemSession>(job.settings);
      slot.stored_baseline_version = 0;
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
  // end the worker thread (std::terminate would lose every result of the batch).
  EvalOutcome evaluate_or_report(Assignment& assignment, const std::string& device) {
    try {
      return evaluate(assignment, device);
    } catch (const std::exception& error) {
      const auto& job = assignment.job;
      EvalOutcome outcome{job.index, job.problem, job.tags, {}, device, false, kMaxAttempts, 0.0};
      outcome.verdict = {{"schema", "kforge.verdict/2"},
                         {"outcome", "error"},
                         {"accepted", false},
                         {"failed_stage", nullptr},
                         {"summary", std::string("error (internal): ") + error.what()},
                         {"speedup", nullptr},
                         {"stages", nlohmann::json::array()},
                         {"error", {{"kind", "internal"}, {"message", error.what()}}}};
      return outcome;
    }
  }

  EvalOutcome evaluate(Assignment& assignment, const std::string& device) {
    auto& job = assignment.job;
    job.settings.device = device;
    EvalOutcome outcome{job.index, job.problem, job.tags, {}, device, false, 0, 0.0};
    outcome.attempts = job.tags.value("_attempt", 0) + 1;
    const auto session = session_for(*assignment.slot, job, device);
    auto* gate = device == "cpu" ? nullptr : gates_.at(device).get();
    auto* budget = device == "cpu" ? nullptr : budgets_.at(device).get();
    const auto& load = session->load_reply();
    if (budget != nullptr && load.is_object() && load.contains("gpu_memory") &&
        load["gpu_memory"].is_object()) {
      budget->set_capacity_once(
          static_cast<std::uint64_t>(kUsableMemoryShare * load["gpu_memory"].value("free", 0.0)));
    }
    const auto zygote = zygote_for(device, job.settings);
    const runner::GpuMemoryBudget::Reservation reservation(budget, evaluation_memory(load));
    const auto verdict = verify::evaluate_in_session(job.settings, *session, gate, zygote.get());
    outcome.verdict = verify::to_json(verdict);
    outcome.judge_lost = session->lost() && !session->load_error();
    if (outcome.judge_lost) {
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

  // What one evaluation may use on the GPU: the candidate's CUDA context and workspace, its own copy of
  // inputs and outputs, the judge's cached references for it. Four times the inputs covers the usual
  // outputs-no-larger-than-inputs problem.
  static std::uint64_t evaluation_memory(const nlohmann::json& load) {
    constexpr std::uint64_t kContextBytes = std::uint64_t{1} << 30;
    constexpr std::uint64_t kInputCopies = 4;
    // No load reply (the problem failed to load): the evaluation reports that, and reserves the minimum.
    const std::uint64_t input_bytes = load.is_object() ? load.value("input_bytes", std::uint64_t{0}) : 0;
    return kContextBytes + kInputCopies * input_bytes;
  }
  static constexpr double kUsableMemoryShare = 0.8;  // of the free memory the first judge saw

  static bool worth_retrying(const EvalOutcome& outcome) {
    if (outcome.verdict.value("outcome", "") != "error" || outcome.attempts >= kMaxAttempts) {
      return false;
    }
    if (outcome.judge_lost) {
      return true;  // the judge died under this evaluation: a new judge gets one more try
    }
    const auto kind = outcome.verdict.contains("error") ? outcome.verdict["error"].value("kind", "") : "";
    return kind != "usage" && kind != "problem";
  }

  void finish(Assignment& assignment, const std::string& device, EvalOutcome outcome) {
    std::shared_ptr<verify::ProblemSession> released;
    {
      const std::lock_guard lock(mutex_);
      auto& queue = *assignment.queue;
      auto& slot = queue.slots[device];
      --slot->running;
      if (worth_retrying(outcome)) {
        auto job = std::move(assignment.job);
        job.tags["_attempt"] = outcome.attempts;
        queue.jobs.push_front(std::move(job));
      } else {
        --pending_;
        outcome.tags.erase("_attempt");
        publish(std::move(outcome));
      }
      if (queue.jobs.empty() && slot->running == 0) {
        released = std::move(slot->session);  // stops the judge outside the lock
        queue.slots.erase(device);
        --active_[device];
      }
    }
    changed_.notify_all();
    released.reset();
  }

  // Called with mutex_ held: stores the verdict (errors are not the candidate's: never stored) and
  // hands the outcome to the caller's callback.
  void publish(EvalOutcome outcome) {
    const auto identity = identities_.find(outcome.index);
    if (options_.store != nullptr && !outcome.from_store && identity != identities_.end() &&
        outcome.verdict.value("outcome", "") != "error") {
      try {
        options_.store->put_verdict(identity->second, outcome.verdict);
      } catch (const std::exception& error) {
        outcome.verdict["store_error"] = error.what();  // the result still reaches the caller
      }
    }
    if (options_.on_result) {
      options_.on_result(outcome);
    }
    results_.push_back(std::move(outcome));
  }

  // This device's zygote, started on first use and replaced when lost; null when it cannot start (then
  // candidates start fresh). Shared: a thread keeps the one it forked from alive while it replaces it.
  std::shared_ptr<runner::CandidateZygote> zygote_for(const std::string& device,
                                                      const verify::EvalSettings& settings) {
    if (!options_.use_zygote) {
      return nullptr;
    }
    auto& slot = *zygotes_.at(device);
    const std::lock_guard lock(slot.mutex);
    if (slot.zygote && !slot.zygote->lost()) {
      return slot.zygote;
    }
    if (slot.starts >= kZygoteStarts) {
      return nullptr;
    }
    ++slot.starts;
    try {
      slot.zygote = runner::CandidateZygote::start(python_, device == "cpu", settings.timeout_s);
    } catch (const std::exception&) {
      slot.zygote.reset();  // fresh starts from now on; a real sandbox problem shows in their verdicts
      slot.starts = kZygoteStarts;
    }
    return slot.zygote;
  }

  struct ZygoteSlot {
    std::mutex mutex;
    std::shared_ptr<runner::CandidateZygote> zygote;
    int starts = 0;
  };
  static constexpr int kZygoteStarts = 3;  // a zygote that keeps dying is given up on

  const SchedulerOptions& options_;
  std::map<std::string, runner::EnvironmentFacts> facts_;
  runner::PythonEnvironment python_;
  std::map<std::string, std::unique_ptr<ZygoteSlot>> zygotes_;
  std::map<std::string, std::unique_ptr<runner::GpuGate>> gates_;
  std::map<std::string, std::unique_ptr<runner::GpuMemoryBudget>> budgets_;
  std::map<std::string, std::size_t> active_;
  std::vector<std::unique_ptr<ProblemQueue>> queues_;
  std::size_t cursor_ = 0;
  std::size_t pending_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<EvalOutcome> results_;
  std::map<std::size_t, store::EvaluationIdentity> identities_;
};

}  // namespace

EvalScheduler::EvalScheduler(SchedulerOptions options) : options_(std::move(options)) {}

std::vector<EvalOutcome> EvalScheduler::run(std::vector<EvalJob> jobs) {
  if (options_.devices.empty() || options_.jobs_per_device == 0 || options_.sessions_per_device == 0) {
    throw std::invalid_argument("the scheduler needs at least one device, job and session per device");
  }
  std::map<std::string, runner::EnvironmentFacts> facts;
  const auto python =
      runner::find_python_environment(jobs.empty() ? std::nullopt : jobs.front().settings.python);
  for (const auto& device : options_.devices) {
    facts[device] = options_.store != nullptr ? runner::probe_environment(python, device)
                                              : runner::EnvironmentFacts{device, {}};
  }
  const auto& first_facts = facts.at(options_.devices.front());
  BatchRun batch(options_, facts, python);
  for (auto& job : jobs) {
    std::optional<store::EvaluationIdentity> identity;
    if (options_.store != nullptr) {
      try {
        identity = evaluation_identity(job.settings, first_facts);
      } catch (const std::exception&) {  // an unreadable file: the evaluation reports it
      }
    }
    if (identity && options_.reuse_stored) {
      if (auto stored = options_.store->find_verdict(*identity)) {
        batch.deliver(
            {job.index, job.problem, job.tags, std::move(*stored), options_.devices.front(), true, 0, 0.0});
        continue;
      }
    }
    if (identity) {
      batch.remember_identity(job.index, std::move(*identity));
    }
    batch.add(std::move(job));
  }
  std::vector<std::thread> threads;
  for (const auto& device : options_.devices) {
    for (std::size_t i = 0; i < options_.jobs_per_device; ++i) {
      threads.emplace_back([&batch, device] { batch.work(device); });
    }
  }
  for (auto& thread : threads) {
    thread.join();
  }
  return batch.take_results();
}

}  // namespace kforge::schedule
