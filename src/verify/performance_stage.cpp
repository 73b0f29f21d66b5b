#include "verify/performance_stage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "measure/measurement_state.hpp"
#include "measure/round_size.hpp"
#include "measure/sample_statistics.hpp"
#include "measure/speedup_estimate.hpp"
#include "measure/timing_policy.hpp"
#include "runner/timing_lease.hpp"
#include "verify/correctness_stage.hpp"
#include "verify/timing_integrity.hpp"

namespace kforge::verify {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTimingTrial = 1'000'000;  // trial id of the timing inputs, apart from correctness trials
constexpr std::uint64_t kTimingSeedOffset = 10'007;
constexpr auto kLeaseWaitLimit = std::chrono::minutes(30);
constexpr double kMinDriftTolerance = 0.02;   // a stored baseline is replaced past this relative change
constexpr std::size_t kMinPairedRounds = 10;  // rounds before convergence may stop the measurement
constexpr double kRoundsPerTarget = 4.0;      // a side's round lasts about round_target_ms / this
constexpr std::size_t kMinSamplesPerRound = 10;

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

std::vector<double> samples_of(const CallResult& call) {
  std::vector<double> samples;
  const auto list = call.body.value("samples_ms", nlohmann::json::array());
  for (const auto& value : list.is_array() ? list : nlohmann::json::array()) {
    if (value.is_number()) {  // anything else shows up as a missing sample
      samples.push_back(value.get<double>());
    }
  }
  return samples;
}

// Timing is the only phase under the lease; the other side is stopped while one side is timed.
class AlternatingTimer {
 public:
  explicit AlternatingTimer(EvalContext& context) : context_(context) {}

  std::optional<std::vector<double>> reference(std::size_t count, std::size_t warmup) {
    context_.candidate->suspend();
    auto call = context_.judge_call({{"op", "time"},
                                     {"trial", kTimingTrial},
                                     {"count", count},
                                     {"warmup", warmup},
                                     {"baseline", context_.settings.baseline}});
    context_.candidate->resume();
    if (!call.ok) {
      context_.fail_evaluation("problem", "timing the reference failed: " + call.message);
      return std::nullopt;
    }
    auto samples = samples_of(call);
    if (samples.size() != count) {
      context_.fail_evaluation("internal",
                               fmt::format("the judge returned {} samples, {} asked", samples.size(), count));
      return std::nullopt;
    }
    return samples;
  }

  std::optional<std::vector<double>> candidate(std::size_t count, std::size_t warmup,
                                               const nlohmann::json* inputs) {
    nlohmann::json request = {{"op", "time"}, {"count", count}, {"warmup", warmup}};
    if (inputs != nullptr) {
      request["inputs"] = *inputs;
    }
    const auto start = Clock::now();
    auto call = context_.candidate_call(request, context_.deadlines.candidate(count + warmup + 1));
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
    std::vector<std::string> replaced;
    for (const auto& name : call.body.value("replaced_timing_functions", nlohmann::json::array())) {
      replaced.push_back(name.is_string() ? name.get<std::string>() : "?");
    }
    batches_.push_back({wall_ms, samples, call.body.value("own_launches", -1L), call.body.value("calls", 0L),
                        std::move(replaced)});
    return samples;
  }

  const std::vector<TimedBatch>& candidate_batches() const { return batches_; }

 private:
  EvalContext& context_;
  std::vector<TimedBatch> batches_;
};

// Paired rounds: each round times the reference, then the candidate, on the same inputs, until the
// noise target (after at least kMinPairedRounds rounds) or a limit. Both sides are sampled across the
// same stretch of time, so a change of the GPU's clock (power management moves it by up to 10% under
// tensor-core load) moves both and cancels in their ratio.
bool measure_paired(EvalContext& context, AlternatingTimer& timer, measure::MeasurementState& state,
                    std::optional<measure::StopDecision>& decision, std::size_t per_round) {
  const measure::TimingPolicy policy(context.settings.timing);
  const auto start = Clock::now();
  while (!decision) {
    const auto reference = timer.reference(per_round, 0);
    const auto candidate = reference ? timer.candidate(per_round, 0, nullptr) : std::nullopt;
    if (!candidate) {
      return false;
    }
    try {
      state.record_round(*reference, *candidate);
    } catch (const std::invalid_argument& error) {  // a zero, negative or NaN time: the timer failed
      context.fail_evaluation("internal", std::string("invalid timing sample: ") + error.what());
      return false;
    }
    state.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    decision = policy.check(state);
    if (decision && decision->converged && state.rounds_completed < kMinPairedRounds) {
      decision.reset();  // converged too early to have paired across clock changes
    }
  }
  return true;
}

// This run's reference samples become the session's baseline (kept in the result store per problem
// and GPU) when there was none or it moved by more than the drift tolerance; the drift is reported.
Baseline update_baseline(EvalContext& context, const measure::MeasurementState& state,
                         const measure::StopDecision& decision, StageResult& stage) {
  Baseline measured;
  measured.kind = context.settings.baseline;
  measured.samples_ms = state.reference_samples_ms;
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

void record_result(StageResult& stage, Verdict& verdict, const measure::MeasurementState& state,
                   const measure::StopDecision& decision, std::size_t per_round, const Baseline& baseline) {
  const auto reference = measure::summarize(state.reference_samples_ms);
  const auto candidate = measure::summarize(state.candidate_samples_ms);
  const auto speedup = measure::estimate_speedup(state.reference_samples_ms, state.candidate_samples_ms);
  stage.status = StageStatus::passed;
  stage.details.update({{"reference", summary_json(reference)},
                        {"candidate", summary_json(candidate)},
                        {"baseline", baseline.kind},
                        {"baseline_stop_reason", baseline.stop_reason},
                        {"speedup", speedup.speedup},
                        {"speedup_ci95", {speedup.ci_low, speedup.ci_high}},
                        {"rounds", state.rounds_completed},
                        {"samples_per_round", per_round},
                        {"converged", decision.converged},
                        {"stop_reason", decision.message},
                        {"method",
                         "cold L2 (flush buffer > L2 before each sample), CUDA events, median; reference and "
                         "candidate timed in paired rounds (at least 4) over the same stretch of time; "
                         "speedup CI by percentile bootstrap"}});
  verdict.speedup = speedup.speedup;
  stage.summary = fmt::format(
      "speedup {:.2f}x (95% CI {:.2f}-{:.2f}) vs {}; candidate {:.4g} ms, reference {:.4g} ms; {}",
      speedup.speedup, speedup.ci_low, speedup.ci_high,
      baseline.kind == "compile" ? "torch.compile" : "eager", candidate.median, reference.median,
      decision.message);
}

// The timed calls must have been honest: cross-checks on the timing, then the judge checks the
// output of the last timed call (a candidate that skips work when called back to back fails here).
bool timing_was_honest(EvalContext& context, const AlternatingTimer& timer,
                       const measure::MeasurementState& state) {
  auto findings = timing_integrity_findings(timer.candidate_batches(), context.evidence,
                                            measure::summarize(state.candidate_samples_ms).median);
  const auto output = context.candidate_call({{"op", "timed_output"}});
  if (!output.ok) {
    context.fail_stage(StageName::performance,
                       "the output of the timed calls could not be read: " + output.message, output);
    return false;
  }
  nlohmann::json request = {
      {"op", "check_trial"},
      {"trial", kTimingTrial},
      {"outputs", output.body.value("outputs", nlohmann::json::array())},
      {"container", output.body.value("container", nlohmann::json(nullptr))},
      {"atol", context.settings.atol ? nlohmann::json(*context.settings.atol) : nlohmann::json()},
      {"rtol", context.settings.rtol ? nlohmann::json(*context.settings.rtol) : nlohmann::json()}};
  const auto check = context.judge_call(request);
  if (!check.ok || !check.body.value("passed", false)) {
    findings.push_back({"timed-output-mismatch",
                        rules::Severity::reject,
                        "the output of the last timed call is wrong (" + first_failure(check.body) +
                            "): the timed calls did not compute what the correctness trials did",
                        {0, 0}});
  }
  if (findings.empty()) {
    return true;
  }
  const std::string summary = fmt::format("[{}] {}", findings.front().rule_id, findings.front().message);
  context.reject_stage(StageName::performance, summary, std::move(findings));
  return false;
}

// What the timing rounds produced.
struct TimedRounds {
  measure::MeasurementState state;
  measure::StopDecision decision;
  Baseline baseline;
  std::size_t per_round = 0;
};

// The timing rounds, with the GPU to this evaluation alone (the gate) and to this kforge alone among
// processes (the lease): warm-up, baseline check or measurement, then candidate rounds to a decision.
std::optional<TimedRounds> time_alone(EvalContext& context, AlternatingTimer& timer,
                                      const nlohmann::json& inputs) {
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
  const auto first = timer.candidate(1, config.warmup_samples, &inputs);
  const auto warm = first ? timer.reference(1, config.warmup_samples) : std::nullopt;
  if (first && warm) {
    // Short rounds (about 12 ms a side by default) pair the two sides finely in time
    const double slower = std::max(first->front(), warm->front());
    const std::size_t per_round =
        std::max(kMinSamplesPerRound,
                 measure::choose_samples_per_round(slower, config.round_target_ms / kRoundsPerTarget));
    measure::MeasurementState state;
    std::optional<measure::StopDecision> decision;
    if (measure_paired(context, timer, state, decision, per_round) && decision) {
      auto baseline = update_baseline(context, state, *decision, stage);
      rounds = TimedRounds{std::move(state), *decision, std::move(baseline), per_round};
    }
  }
  context.timing_exclusive = false;
  stage.details["gpu_exclusive_s"] = std::chrono::duration<double>(Clock::now() - held_since).count();
  return rounds;
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
  // Inputs are made, and the timed output checked, in shared use: only the timing rounds hold the GPU
  const auto seed = context.settings.seed + kTimingSeedOffset;
  const auto inputs = context.judge_call({{"op", "start_trial"}, {"trial", kTimingTrial}, {"seed", seed}});
  if (!inputs.ok) {
    context.fail_evaluation("problem", "the judge could not prepare timing inputs: " + inputs.message);
    return;
  }
  AlternatingTimer timer(context);
  const auto rounds = time_alone(context, timer, inputs.body["inputs"]);
  const bool honest = rounds && timing_was_honest(context, timer, rounds->state);
  context.candidate_call({{"op", "release"}});
  context.judge_call({{"op", "end_trial"}, {"trial", kTimingTrial}});
  stage.duration_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (honest) {
    record_result(stage, context.verdict, rounds->state, rounds->decision, rounds->per_round,
                  rounds->baseline);
  }
}

}  // namespace kforge::verify
