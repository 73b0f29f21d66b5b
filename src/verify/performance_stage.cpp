#include "verify/performance_stage.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "measure/measurement_state.hpp"
#include "measure/process_spread.hpp"
#include "measure/reference_basis.hpp"
#include "measure/round_size.hpp"
#include "measure/sample_statistics.hpp"
#include "measure/sample_validation.hpp"
#include "measure/speedup_estimate.hpp"
#include "measure/timing_policy.hpp"
#include "runner/timing_lease.hpp"
#include "verify/correctness_stage.hpp"
#include "verify/gpu_memory_share.hpp"
#include "verify/timed_values.hpp"
#include "verify/timing_integrity.hpp"

namespace kforge::verify {
namespace {

constexpr std::size_t kWarmUpCalls = 10;

using Clock = std::chrono::steady_clock;
constexpr int kTimingTrial = 1'000'000;  // trial id of the timing inputs, apart from correctness trials
constexpr auto kLeaseWaitLimit = std::chrono::minutes(30);
constexpr double kMinDriftTolerance = 0.02;   // a stored baseline is replaced past this relative change
constexpr std::size_t kMinPairedRounds = 10;  // rounds before convergence may stop the measurement
constexpr double kRoundsPerTarget = 4.0;      // a side's round lasts about round_target_ms / this
constexpr std::size_t kMinSamplesPerRound = 3;
constexpr std::size_t kProbeSamples = 5;  // after the warm-up: sizes the rounds, not part of the result
constexpr std::size_t kMaxWallCalls = 20;
constexpr std::size_t kSamplesPerWallCall = 10;
// The first (warm-up) batch of each side ends with this many back-to-back calls at least: a candidate
// that behaves only when its calls come quickly one after another (a benchmark loop) is caught by the
// check of that burst's last output, now that timed samples are spaced by the wait for their end event.
constexpr std::size_t kFirstBatchWallCalls = 10;

constexpr const char* kMethod =
    "device time of one call: before each sample the L2 is flushed (a read of max(2 x L2, 128 MiB)) and "
    "the stream sleeps (torch.cuda._sleep) 3x the call's host enqueue time, so the whole call is queued "
    "before the start event; CUDA events bracket the call (host launch overhead excluded, cold L2); "
    "warm-up until steady; median; reference and candidate timed alike in paired rounds (at least 10) "
    "over the same stretch of time (with --reference-beside the reference is also timed in the "
    "candidate's process and the speedup compares within it; see timing_basis); the host waits for each "
    "sample's end event before it queues anything else; the input values rotate between samples and every "
    "timed output is checked; each worker times on the fastest of 8 streams (a launch-bound probe); speedup "
    "CI by percentile bootstrap, widened by a calibrated process term when the sides ran in two processes "
    "(process_spread); wall_per_call_ms (synchronised "
    "back-to-back calls, host overhead included) for information";

nlohmann::json summary_json(const measure::SampleSummary& summary) {
  return {{"count", summary.count},
          {"median_ms", summary.median},
          {"mean_ms", summary.mean},
          {"stddev_ms", summary.stddev},
          {"min_ms", summary.min},
          {"max_ms", summary.max},
          {"p25_ms", summary.p25},
          {"p75_ms", summary.p75},
          {"median_ci95_ms", {summary.median_ci_low, summary.median_ci_high}},
          {"relative_noise", summary.relative_noise}};
}

std::vector<double> samples_of_key(const CallResult& call, const char* key) {
  std::vector<double> samples;
  const auto list = call.body.value(key, nlohmann::json::array());
  for (const auto& value : list.is_array() ? list : nlohmann::json::array()) {
    if (value.is_number()) {  // anything else shows up as a missing sample
      samples.push_back(value.get<double>());
    }
  }
  return samples;
}

std::vector<double> samples_of(const CallResult& call) { return samples_of_key(call, "samples_ms"); }

std::vector<std::string> strings_of(const nlohmann::json& body, const char* key) {
  std::vector<std::string> strings;
  const auto list = body.value(key, nlohmann::json::array());
  for (const auto& item : list.is_array() ? list : nlohmann::json::array()) {
    strings.push_back(item.is_string() ? item.get<std::string>() : item.dump());
  }
  return strings;
}

double number_or(const nlohmann::json& body, const char* key, double fallback) {
  const auto found = body.find(key);
  return found != body.end() && found->is_number() ? found->get<double>() : fallback;
}

std::size_t wall_calls_for(std::size_t samples, bool first_batch) {
  const auto calls = std::clamp<std::size_t>(samples / kSamplesPerWallCall, 1, kMaxWallCalls);
  return first_batch ? std::max(calls, kFirstBatchWallCalls) : calls;
}

// What one side's `time` request gave besides its samples.
struct SideBatch {
  std::vector<double> samples_ms;
  double sample_cost_ms = 0.0;  // wall time of the loop per sample: sizes the rounds
  double wall_ms_per_call = -1.0;
  double host_ms_per_call = -1.0;
  double sleep_us = 0.0;
  long host_exposed = 0;
  nlohmann::json warmup;
  std::vector<double> beside_reference_ms;  // the reference timed in the candidate's process, if it was
  std::string beside_refused;               // why it was not, when it was asked for
};

SideBatch side_batch(const CallResult& call, std::vector<double> samples) {
  SideBatch batch;
  batch.samples_ms = std::move(samples);
  batch.sample_cost_ms = number_or(call.body, "sample_cost_ms", 0.0);
  batch.wall_ms_per_call = number_or(call.body, "wall_ms_per_call", -1.0);
  batch.host_ms_per_call = number_or(call.body, "host_ms_per_call", -1.0);
  batch.sleep_us = number_or(call.body, "sleep_us", 0.0);
  batch.host_exposed = call.body.value("host_exposed", 0L);
  batch.warmup = call.body.value("warmup", nlohmann::json(nullptr));
  return batch;
}

// The reference's samples beside the candidate in its reply: all of them, or none with the reason.
void read_beside_reference(const CallResult& call, std::size_t count, SideBatch& batch) {
  auto beside = samples_of_key(call, "reference_samples_ms");
  if (beside.size() == count && count > 0) {
    batch.beside_reference_ms = std::move(beside);
    return;
  }
  const auto refused = call.body.find("beside_refused");
  batch.beside_refused =
      refused != call.body.end() && refused->is_string()
          ? refused->get<std::string>()
          : fmt::format("the worker returned {} reference samples, {} asked", beside.size(), count);
}

// Everything a side's requests reported besides the samples kept in the measurement state.
struct SideRecord {
  std::vector<double> wall_ms_per_call;  // one per request that measured it
  std::vector<double> host_ms_per_call;  // the host enqueue time of those calls
  std::vector<double> sleep_us;
  long host_exposed = 0;
  long samples = 0;
  nlohmann::json warmup;

  void add(const SideBatch& batch) {
    if (batch.wall_ms_per_call > 0.0 && batch.host_ms_per_call >= 0.0) {
      wall_ms_per_call.push_back(batch.wall_ms_per_call);
      host_ms_per_call.push_back(batch.host_ms_per_call);
    }
    sleep_us.push_back(batch.sleep_us);
    host_exposed += batch.host_exposed;
    samples += static_cast<long>(batch.samples_ms.size());
    if (!batch.warmup.is_null()) {
      warmup = batch.warmup;
    }
  }

  double median_wall_ms() const {
    return wall_ms_per_call.empty() ? 0.0 : measure::summarize(wall_ms_per_call).median;
  }

  // This side's back-to-back calls as the control of the other's wall check.
  WallControl wall_control(const std::vector<double>& samples_ms) const {
    if (wall_ms_per_call.empty() || samples_ms.empty()) {
      return {};
    }
    return {median_wall_ms(), measure::summarize(host_ms_per_call).median,
            measure::summarize(samples_ms).median};
  }

  nlohmann::json to_json() const {
    return {{"wall_ms_per_call",
             wall_ms_per_call.empty() ? nlohmann::json(nullptr) : nlohmann::json(median_wall_ms())},
            {"sleep_us", sleep_us.empty() ? 0.0 : measure::summarize(sleep_us).median},
            {"host_exposed_samples", host_exposed},
            {"samples", samples},
            {"warmup", warmup}};
  }
};

// Timing is the only phase under the lease; the other side is stopped while one side is timed. Both
// sides get the same requests: warm-up, value order, samples, back-to-back calls.
class AlternatingTimer {
 public:
  AlternatingTimer(EvalContext& context, std::size_t value_sets, bool beside)
      : context_(context), value_sets_(value_sets), random_(std::random_device{}()), beside_asked_(beside) {}

  std::optional<SideBatch> reference(std::size_t count, bool warmup) {
    const auto order = value_set_order(count, value_sets_, random_, -1);
    nlohmann::json request = {{"op", "time"},
                              {"trial", kTimingTrial},
                              {"count", count},
                              {"value_order", order},
                              {"wall_calls", wall_calls_for(count, warmup)},
                              {"baseline", context_.settings.baseline}};
    if (warmup) {
      request["warmup"] = warmup_request();
    }
    context_.candidate->suspend();
    auto call = context_.judge_call(request);
    context_.candidate->resume();
    if (!call.ok) {
      context_.fail_judge("timing the reference failed: " + call.message, call);
      return std::nullopt;
    }
    auto samples = samples_of(call);
    if (samples.size() != count) {
      context_.fail_evaluation("internal",
                               fmt::format("the judge returned {} samples, {} asked", samples.size(), count));
      return std::nullopt;
    }
    auto batch = side_batch(call, std::move(samples));
    reference_record_.add(batch);
    return batch;
  }

  // reference_first: the reference beside the candidate, when it is timed, goes first in this batch.
  std::optional<SideBatch> candidate(std::size_t count, bool warmup, const nlohmann::json* inputs,
                                     const nlohmann::json* value_sets, bool reference_first = false) {
    const auto order = value_set_order(count, value_sets_, random_, last_set_);
    const auto wall_calls = wall_calls_for(count, warmup);
    const bool beside = beside_active();
    nlohmann::json request = {
        {"op", "time"}, {"count", count}, {"value_order", order}, {"wall_calls", wall_calls}};
    if (beside) {
      request["beside"] = true;
      request["reference_first"] = reference_first;
    }
    if (warmup) {
      request["warmup"] = warmup_request();
    }
    if (inputs != nullptr) {
      request["inputs"] = *inputs;
    }
    if (value_sets != nullptr) {
      request["value_sets"] = *value_sets;
    }
    const auto start = Clock::now();
    // A warm-up runs at least kWarmUpCalls more forwards (WarmUpPolicy.min_calls in the worker), and
    // its first call autotunes again: it gets the first calls' allowance too.
    const std::size_t forwards = (count + wall_calls + (warmup ? kWarmUpCalls : 0) + 1) * (beside ? 2 : 1);
    auto call = context_.candidate_call(
        request, warmup ? context_.deadlines.warm_up(forwards) : context_.deadlines.candidate(forwards));
    const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!call.ok) {
      context_.fail_stage(StageName::performance, "timing the candidate failed: " + call.message, call);
      return std::nullopt;
    }
    auto samples = samples_of(call);
    if (samples.size() != count) {
      CallResult bad{false, call.body, "protocol", "wrong number of timing samples", false};
      context_.fail_stage(
          StageName::performance,
          fmt::format("the candidate worker returned {} samples, {} asked", samples.size(), count), bad);
      return std::nullopt;
    }
    // The worker keeps an output of every sample, and of the last back-to-back call (on the last
    // sample's values): the judge checks each against the reference of its value set.
    kept_order_.insert(kept_order_.end(), order.begin(), order.end());
    kept_order_.push_back(order.back());
    last_set_ = order.back();
    TimedBatch timed;
    timed.wall_ms = wall_ms;
    timed.samples_ms = samples;
    timed.own_launches = call.body.value("own_launches", -1L);
    timed.calls = call.body.value("calls", 0L);
    timed.replaced_timing_functions = strings_of(call.body, "replaced_timing_functions");
    timed.side_stream_launches = call.body.value("side_stream_launches", 0L);
    timed.input_attributes = strings_of(call.body, "input_attributes");
    timed.wall_ms_per_call = number_or(call.body, "wall_ms_per_call", -1.0);
    timed.host_ms_per_call = number_or(call.body, "host_ms_per_call", -1.0);
    batches_.push_back(std::move(timed));
    auto batch = side_batch(call, std::move(samples));
    if (beside) {
      read_beside_reference(call, count, batch);
      if (!batch.beside_refused.empty()) {
        beside_lost_ = batch.beside_refused;  // the rest of the measurement compares two processes
      }
    }
    candidate_record_.add(batch);
    return batch;
  }

  // Whether the candidate worker still times the reference beside the candidate.
  bool beside_active() const { return beside_asked_ && beside_lost_.empty(); }
  bool beside_asked() const { return beside_asked_; }
  // Why the reference stopped being timed beside the candidate (empty while it is).
  const std::string& beside_lost() const { return beside_lost_; }

  const std::vector<TimedBatch>& candidate_batches() const { return batches_; }
  const std::vector<int>& kept_order() const { return kept_order_; }
  int last_set() const { return last_set_; }
  std::size_t value_sets() const { return value_sets_; }
  const SideRecord& reference_record() const { return reference_record_; }
  const SideRecord& candidate_record() const { return candidate_record_; }

 private:
  nlohmann::json warmup_request() const { return {{"min_calls", context_.settings.timing.warmup_samples}}; }

  EvalContext& context_;
  std::size_t value_sets_;
  std::mt19937_64 random_;  // the value order: the candidate cannot predict it
  int last_set_ = -1;
  std::vector<int> kept_order_;
  std::vector<TimedBatch> batches_;
  SideRecord reference_record_;
  SideRecord candidate_record_;
  bool beside_asked_;
  std::string beside_lost_;
};

// Every timed round's samples: the reference in the judge and beside the candidate, and the candidate.
struct PairedSamples {
  std::vector<double> judge_reference_ms;
  std::vector<double> beside_reference_ms;
  std::vector<double> candidate_ms;

  void add(const SideBatch& judge, const SideBatch& candidate) {
    judge_reference_ms.insert(judge_reference_ms.end(), judge.samples_ms.begin(), judge.samples_ms.end());
    candidate_ms.insert(candidate_ms.end(), candidate.samples_ms.begin(), candidate.samples_ms.end());
    beside_reference_ms.insert(beside_reference_ms.end(), candidate.beside_reference_ms.begin(),
                               candidate.beside_reference_ms.end());
  }

  // Every round had the reference timed beside the candidate (a batch has all its samples or none).
  bool beside_complete() const {
    return !beside_reference_ms.empty() && beside_reference_ms.size() == candidate_ms.size();
  }
};

// Paired rounds: each round times both sides, in turns, on the same inputs, until the
// noise target (after at least kMinPairedRounds rounds) or a limit. Both sides are sampled across the
// same stretch of time, so a change of the GPU's clock (power management moves it by up to 10% under
// tensor-core load) moves both and cancels in their ratio.
bool measure_paired(EvalContext& context, AlternatingTimer& timer, measure::MeasurementState& state,
                    PairedSamples& paired, std::optional<measure::StopDecision>& decision,
                    std::size_t per_round) {
  const measure::TimingPolicy policy(context.settings.timing);
  const auto start = Clock::now();
  while (!decision) {
    // The sides take turns going first (ABBA): whatever the side that runs second gains or loses (the
    // clock the other left ramped, its caches, the switch of process) falls on both equally.
    // The same alternation inside the candidate's process, between the candidate and the reference
    // beside it; the judge's samples, only a check on those when they are taken, are half as many.
    const bool reference_first = state.rounds_completed % 2 == 1;
    const std::size_t judge_count =
        timer.beside_active() ? std::max(kMinSamplesPerRound, per_round / 2) : per_round;
    std::optional<SideBatch> reference;
    std::optional<SideBatch> candidate;
    if (state.rounds_completed % 2 == 0) {
      reference = timer.reference(judge_count, false);
      candidate =
          reference ? timer.candidate(per_round, false, nullptr, nullptr, reference_first) : std::nullopt;
    } else {
      candidate = timer.candidate(per_round, false, nullptr, nullptr, reference_first);
      reference = candidate ? timer.reference(judge_count, false) : std::nullopt;
    }
    if (!candidate || !reference) {
      return false;
    }
    try {
      const bool beside = !candidate->beside_reference_ms.empty();
      measure::require_positive_times(reference->samples_ms);  // the judge's, kept besides the state's
      state.record_round(beside ? candidate->beside_reference_ms : reference->samples_ms,
                         candidate->samples_ms);
      paired.add(*reference, *candidate);
    } catch (const std::invalid_argument& error) {  // a zero, negative or NaN time: the timer failed
      context.fail_evaluation("internal", std::string("invalid timing sample: ") + error.what());
      return false;
    }
    state.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    context.progress(StageName::performance,
                     fmt::format("timing: {} paired round(s), {} samples per side", state.rounds_completed,
                                 state.rounds_completed * per_round));
    decision = policy.check(state);
    if (decision && decision->converged && state.rounds_completed < kMinPairedRounds) {
      decision.reset();  // converged too early to have paired across clock changes
    }
  }
  return true;
}

// This run's reference samples become the session's baseline (kept in the result store per problem
// and GPU) when there was none or it moved by more than the drift tolerance; the drift is reported.
Baseline update_baseline(EvalContext& context, const PairedSamples& paired,
                         const measure::StopDecision& decision, StageResult& stage) {
  Baseline measured;
  measured.kind = context.settings.baseline;
  measured.samples_ms = paired.judge_reference_ms;  // the judge's process: the same for every candidate
  measured.median_ms = measure::summarize(measured.samples_ms).median;
  measured.stop_reason = decision.message;
  const auto cached = context.session->baseline();
  if (cached && cached->kind == measured.kind) {
    const double drift = std::abs(measured.median_ms / cached->median_ms - 1.0);
    const double tolerance = std::max(kMinDriftTolerance, 3.0 * context.settings.timing.noise_target);
    stage.details["baseline_check"] = {
        {"stored_median_ms", cached->median_ms}, {"drift", drift}, {"tolerance", tolerance}};
    if (drift <= tolerance) {
      return measured;
    }
  }
  context.session->set_baseline(measured);
  return measured;
}

// What the timing rounds produced.
struct TimedRounds {
  measure::MeasurementState state;
  PairedSamples samples;
  measure::StopDecision decision;
  Baseline baseline;
  std::size_t per_round = 0;
};

// Which reference samples the speedup uses, with the reason (measure/reference_basis).
measure::ReferenceBasis reference_basis(const PairedSamples& paired, const AlternatingTimer& timer) {
  const bool beside = timer.beside_asked() && paired.beside_complete();
  auto basis = measure::choose_reference_basis(
      paired.judge_reference_ms,
      beside ? std::span<const double>(paired.beside_reference_ms) : std::span<const double>());
  if (timer.beside_asked() && !beside) {
    basis.why += fmt::format(" ({})", timer.beside_lost());
  }
  return basis;
}

nlohmann::json basis_json(const measure::ReferenceBasis& basis, const PairedSamples& paired) {
  return {{"basis", basis.same_process ? "same-process" : "cross-process"},
          {"why", basis.why},
          {"offset_ms", basis.offset_ms},
          {"bound_ms", basis.bound_ms},
          {"reference_in_judge", summary_json(measure::summarize(paired.judge_reference_ms))},
          {"reference_beside_candidate", paired.beside_reference_ms.empty()
                                             ? nlohmann::json(nullptr)
                                             : summary_json(measure::summarize(paired.beside_reference_ms))}};
}

void record_result(StageResult& stage, Verdict& verdict, const TimedRounds& rounds,
                   const AlternatingTimer& timer) {
  const auto& state = rounds.state;
  const auto& paired = rounds.samples;
  const auto basis = reference_basis(paired, timer);
  const auto& reference_samples = basis.same_process ? paired.beside_reference_ms : paired.judge_reference_ms;
  const auto reference = measure::summarize(reference_samples);
  const auto candidate = measure::summarize(paired.candidate_ms);
  const auto within_process = measure::estimate_speedup(reference_samples, paired.candidate_ms);
  // Two processes: each carries an offset of its own that no bootstrap of its samples sees.
  const auto speedup = basis.same_process
                           ? within_process
                           : measure::with_process_spread(within_process, reference.median, candidate.median);
  const double reference_wall = timer.reference_record().median_wall_ms();
  const double candidate_wall = timer.candidate_record().median_wall_ms();
  stage.status = StageStatus::passed;
  stage.details.update(
      {{"reference", summary_json(reference)},
       {"candidate", summary_json(candidate)},
       {"baseline", rounds.baseline.kind},
       {"baseline_stop_reason", rounds.baseline.stop_reason},
       {"speedup", speedup.speedup},
       {"speedup_ci95", {speedup.ci_low, speedup.ci_high}},
       {"speedup_ci95_within_process", {within_process.ci_low, within_process.ci_high}},
       {"process_spread",
        basis.same_process
            ? nlohmann::json(nullptr)
            : nlohmann::json{{"reference_relative_sd", measure::process_relative_sd(reference.median)},
                             {"candidate_relative_sd", measure::process_relative_sd(candidate.median)}}},
       {"speedup_basis", "device time per call (CUDA events; host launch overhead excluded; cold L2)"},
       {"timing_basis", basis_json(basis, paired)},
       {"wall_per_call_ms",
        {{"reference", reference_wall},
         {"candidate", candidate_wall},
         {"ratio", candidate_wall > 0.0 ? reference_wall / candidate_wall : 0.0}}},
       {"timing_sides",
        {{"reference", timer.reference_record().to_json()},
         {"candidate", timer.candidate_record().to_json()}}},
       {"timed_value_sets", timer.value_sets()},
       {"checked_timed_calls", timer.kept_order().size()},
       {"rounds", state.rounds_completed},
       {"samples_per_round", rounds.per_round},
       {"converged", rounds.decision.converged},
       {"stop_reason", rounds.decision.message},
       {"method", kMethod}});
  verdict.speedup = speedup.speedup;
  stage.summary = fmt::format(
      "speedup {:.2f}x (95% CI {:.2f}-{:.2f}) vs {}; candidate {:.4g} ms, reference {:.4g} ms of device time "
      "per call ({}); {}",
      speedup.speedup, speedup.ci_low, speedup.ci_high,
      rounds.baseline.kind == "compile" ? "torch.compile" : "eager", candidate.median, reference.median,
      basis.same_process ? "both in the candidate's process" : "the reference in the judge's process",
      rounds.decision.message);
}

nlohmann::json optional_tolerance(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

// What the judge's check of the kept timed outputs found; `judge_failed` when the judge itself could not
// check (out of GPU memory beside other evaluations, a crash): that is no finding against the candidate.
struct TimedOutputCheck {
  std::optional<rules::Finding> finding;
  std::optional<std::string> judge_failed;
};

// The judge's check of what the candidate kept of its timed calls: sampled elements of every timed
// output, the last output of each value set, and the timing inputs left unmodified.
TimedOutputCheck timed_output_finding(EvalContext& context, const AlternatingTimer& timer,
                                      const CallResult& kept) {
  const auto problems = strings_of(kept.body, "problems");
  if (!problems.empty()) {
    return {rules::Finding{"timed-output-mismatch",
                           rules::Severity::reject,
                           fmt::format("the timed calls returned outputs kforge cannot check ({})",
                                       fmt::join(problems, "; ")),
                           {0, 0}},
            std::nullopt};
  }
  const auto rows = kept.body.value("row_count", 0L);
  if (rows != static_cast<long>(timer.kept_order().size())) {
    return {rules::Finding{"timed-output-mismatch",
                           rules::Severity::reject,
                           fmt::format("the candidate worker kept {} timed outputs, kforge timed {} calls",
                                       rows, timer.kept_order().size()),
                           {0, 0}},
            std::nullopt};
  }
  const nlohmann::json request = {{"op", "check_timed"},
                                  {"trial", kTimingTrial},
                                  {"slots", kept.body.value("slots", nlohmann::json::array())},
                                  {"rows", kept.body.value("rows", nlohmann::json::array())},
                                  {"positions", kept.body.value("positions", nlohmann::json::array())},
                                  {"order", timer.kept_order()},
                                  {"last_set", timer.last_set()},
                                  {"atol", optional_tolerance(context.settings.atol)},
                                  {"rtol", optional_tolerance(context.settings.rtol)}};
  const auto check = context.judge_call(request);
  if (!check.ok) {
    return {std::nullopt, check.message};
  }
  if (check.body.value("passed", false)) {
    return {};
  }
  const auto checks = strings_of(check.body, "checks");
  const bool only_mutation = !checks.empty() && std::all_of(checks.begin(), checks.end(), [](const auto& id) {
    return id == "input-mutation";
  });
  const std::string why = first_failure(check.body);
  return {
      rules::Finding{only_mutation ? "input-mutation" : "timed-output-mismatch",
                     rules::Severity::reject,
                     only_mutation ? "the timed calls modified their inputs (" + why + ")"
                                   : "a timed call's output is wrong (" + why +
                                         "): the timed calls did not compute what the correctness trials did",
                     {0, 0}},
      std::nullopt};
}

// The timed calls must have been honest: cross-checks on the timing, then the judge checks the
// outputs of the timed calls (a candidate that behaves only when not timed fails here).
bool timing_was_honest(EvalContext& context, const AlternatingTimer& timer, const PairedSamples& paired) {
  auto findings = timing_integrity_findings(timer.candidate_batches(), context.evidence,
                                            measure::summarize(paired.candidate_ms).median,
                                            timer.reference_record().wall_control(paired.judge_reference_ms));
  const auto kept = context.candidate_call({{"op", "timed_output"}});
  if (!kept.ok) {
    context.fail_stage(StageName::performance,
                       "the output of the timed calls could not be read: " + kept.message, kept);
    return false;
  }
  auto checked = timed_output_finding(context, timer, kept);
  if (checked.judge_failed) {
    // Out of GPU memory beside other evaluations is the machine's state; anything else is kforge's fault.
    const bool memory = checked.judge_failed->find("out of memory") != std::string::npos;
    context.fail_evaluation(memory ? "environment" : "internal",
                            "the judge could not check the timed calls' outputs: " + *checked.judge_failed);
    return false;
  }
  if (checked.finding) {
    findings.push_back(std::move(*checked.finding));
  }
  if (findings.empty()) {
    return true;
  }
  const std::string summary = fmt::format("[{}] {}", findings.front().rule_id, findings.front().message);
  context.reject_stage(StageName::performance, summary, std::move(findings));
  return false;
}

// The timing rounds, with the GPU to this evaluation alone (the gate) and to this kforge alone among
// processes (the lease): warm-up, baseline check or measurement, then candidate rounds to a decision.
std::optional<TimedRounds> time_alone(EvalContext& context, AlternatingTimer& timer,
                                      const nlohmann::json& inputs, const nlohmann::json& value_sets) {
  auto& stage = context.verdict.stage(StageName::performance);
  const runner::GpuGate::ExclusiveUse exclusive(context.gate);  // no other evaluation's GPU work meanwhile
  context.gpu_wait_s += std::chrono::duration<double>(exclusive.waited()).count();
  const auto held_since = Clock::now();
  context.timing_exclusive = true;
  const std::string gpu = context.verdict.device.value("uuid", context.verdict.device.value("device", "gpu"));
  auto lease = runner::TimingLease::acquire(gpu, kLeaseWaitLimit);  // nor another kforge's timing
  stage.details["lease_wait_s"] = std::chrono::duration<double>(lease.waited()).count();
  const auto& config = context.settings.timing;
  std::optional<TimedRounds> rounds;
  const auto first = timer.candidate(kProbeSamples, true, &inputs, &value_sets);
  const auto warm = first ? timer.reference(kProbeSamples, true) : std::nullopt;
  if (first && warm) {
    // Short rounds (about 12 ms a side by default) pair the two sides finely in time
    const double slower = std::max(first->sample_cost_ms, warm->sample_cost_ms);
    const std::size_t per_round =
        std::max(kMinSamplesPerRound,
                 measure::choose_samples_per_round(slower, config.round_target_ms / kRoundsPerTarget));
    measure::MeasurementState state;
    PairedSamples paired;
    std::optional<measure::StopDecision> decision;
    if (measure_paired(context, timer, state, paired, decision, per_round) && decision) {
      auto baseline = update_baseline(context, paired, *decision, stage);
      rounds = TimedRounds{std::move(state), std::move(paired), *decision, std::move(baseline), per_round};
    }
  }
  context.timing_exclusive = false;
  stage.details["gpu_exclusive_s"] = std::chrono::duration<double>(Clock::now() - held_since).count();
  return rounds;
}

// More value sets for the timing inputs (the judge gives fewer when they do not fit or differ in shape).
std::pair<std::size_t, nlohmann::json> prepare_value_sets(EvalContext& context, std::uint64_t input_bytes) {
  const auto output_bytes = ProblemFootprint::from_load_reply(context.session->load_reply()).output_bytes;
  const auto wanted = timing_value_sets(input_bytes + output_bytes);
  nlohmann::json seeds = nlohmann::json::array();
  for (std::size_t i = 1; i < wanted; ++i) {
    seeds.push_back(context.seeds.timing(static_cast<int>(i)));
  }
  const auto sets = context.judge_call({{"op", "add_value_sets"},
                                        {"trial", kTimingTrial},
                                        {"seeds", seeds},
                                        {"max_bytes", static_cast<std::uint64_t>(wanted) * input_bytes}});
  auto& stage = context.verdict.stage(StageName::performance);
  if (!sets.ok) {
    stage.details["value_sets_note"] = "one value set: " + sets.message;
    return {1, nlohmann::json::array()};
  }
  const auto count = std::max<std::size_t>(1, sets.body.value("count", std::size_t{1}));
  if (const auto reason = sets.body.find("reason"); reason != sets.body.end() && reason->is_string()) {
    stage.details["value_sets_note"] = reason->get<std::string>();
  }
  return {count, sets.body.value("value_sets", nlohmann::json::array())};
}

std::uint64_t tensor_bytes(const nlohmann::json& encoded) {
  std::uint64_t bytes = 0;
  for (const auto& item : encoded.is_array() ? encoded : nlohmann::json::array()) {
    if (item.is_object()) {
      bytes += item.value("nbytes", std::uint64_t{0});
    }
  }
  return bytes;
}

}  // namespace

void run_performance_stage(EvalContext& context) {
  auto& stage = context.verdict.stage(StageName::performance);
  if (!context.on_gpu) {
    stage.status = StageStatus::skipped;
    stage.summary = "skipped: no GPU (the Triton interpreter runs on the CPU; its timings mean nothing)";
    return;
  }
  if (!context.settings.measure_performance) {
    stage.status = StageStatus::skipped;
    stage.summary = "skipped: --no-perf";
    return;
  }
  const auto start = Clock::now();
  // Inputs are made, and the timed outputs checked, in shared use: only the timing rounds hold the GPU
  const auto inputs =
      context.judge_call({{"op", "start_trial"}, {"trial", kTimingTrial}, {"seed", context.seeds.timing()}});
  if (!inputs.ok) {
    context.fail_judge("the judge could not prepare timing inputs: " + inputs.message, inputs);
    return;
  }
  const auto [value_set_count, value_sets] =
      prepare_value_sets(context, tensor_bytes(inputs.body.value("inputs", nlohmann::json::array())));
  AlternatingTimer timer(context, value_set_count, context.reference_beside);
  const auto rounds = time_alone(context, timer, inputs.body["inputs"], value_sets);
  const bool honest = rounds && timing_was_honest(context, timer, rounds->samples);
  context.candidate_call({{"op", "release"}});
  context.judge_call({{"op", "end_trial"}, {"trial", kTimingTrial}});
  stage.duration_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (honest) {
    record_result(stage, context.verdict, *rounds, timer);
  }
}

}  // namespace kforge::verify
