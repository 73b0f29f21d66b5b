#include "verify/timing_integrity.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "measure/sample_statistics.hpp"
#include "verify/no_location.hpp"

namespace kforge::verify {
namespace {

// Allowed excess of profiled kernel time over the timed median: warm vs cold cache and clock jitter
// go the other way, so only a clear excess means work outside the timed stream.
constexpr double kHiddenWorkRatio = 1.5;
constexpr double kHiddenWorkSlackUs = 20.0;
// Allowed excess of the back-to-back wall time per call over max(host enqueue, event time): the
// device-wide synchronisation costs microseconds per batch, warm L2 only makes calls faster.
constexpr double kWallRatio = 2.0;
constexpr double kWallSlackMs = 0.02;

void check_timing_functions(const TimedBatch& batch, std::vector<rules::Finding>& findings) {
  if (!batch.replaced_timing_functions.empty()) {
    findings.push_back(
        {"timer-tampering", rules::Severity::reject,
         fmt::format("the candidate replaced timing functions ({}); kforge timed with the originals, "
                     "but a candidate that patches the timer is cheating",
                     fmt::join(batch.replaced_timing_functions, ", ")),
         kNoLocation});
  }
}

void check_wall_clock(const TimedBatch& batch, std::vector<rules::Finding>& findings) {
  const double reported = std::accumulate(batch.samples_ms.begin(), batch.samples_ms.end(), 0.0);
  if (reported > batch.wall_ms) {
    findings.push_back(
        {"timer-tampering", rules::Severity::reject,
         fmt::format("the candidate reported {:.3f} ms of GPU time for a request that took {:.3f} ms "
                     "of wall time: its timer does not measure its work",
                     reported, batch.wall_ms),
         kNoLocation});
  }
}

void check_launches(const TimedBatch& batch, long expected_per_call, std::vector<rules::Finding>& findings) {
  if (batch.own_launches < 0 || batch.calls <= 0 || expected_per_call <= 0) {
    return;
  }
  if (batch.own_launches < expected_per_call * batch.calls) {
    findings.push_back(
        {"timing-kernels-skipped", rules::Severity::reject,
         fmt::format("while being timed, forward launched {} of its Triton kernels in {} calls; the "
                     "correctness trials launched {} per call: timed calls skip work",
                     batch.own_launches, batch.calls, expected_per_call),
         kNoLocation});
  }
}

void check_side_streams(const TimedBatch& batch, std::vector<rules::Finding>& findings) {
  if (batch.side_stream_launches > 0) {
    findings.push_back(
        {"side-stream-launch", rules::Severity::reject,
         fmt::format("while being timed, forward launched {} Triton kernel(s) on a stream other "
                     "than the timed one: the timing events do not cover them",
                     batch.side_stream_launches),
         kNoLocation});
  }
}

void check_input_attributes(const TimedBatch& batch, std::vector<rules::Finding>& findings) {
  if (!batch.input_attributes.empty()) {
    findings.push_back({"input-attributes", rules::Severity::reject,
                        fmt::format("the timed calls left state on the input tensors ({}): an answer or a "
                                    "call count kept on an input tells timed calls apart",
                                    fmt::join(batch.input_attributes, "; ")),
                        kNoLocation});
  }
}

void check_profiled_kernel_time(const RuntimeEvidence& evidence, double timed_ms,
                                std::vector<rules::Finding>& findings) {
  const double kernel_us = evidence.gpu_kernel_time_us();
  const double timed_us = timed_ms * 1000.0;
  if (evidence.on_gpu && kernel_us > kHiddenWorkRatio * timed_us + kHiddenWorkSlackUs) {
    findings.push_back(
        {"hidden-gpu-work", rules::Severity::reject,
         fmt::format("the profiler saw {:.1f} µs of GPU kernels per forward but the timing events "
                     "measured {:.1f} µs: work runs on streams the timing does not cover",
                     kernel_us, timed_us),
         kNoLocation});
  }
}

// Back-to-back calls synchronised on every stream take about max(host enqueue, device time): when
// they take far longer than the events said, the GPU was busy with work the events did not see.
// What a side's back-to-back calls spent beyond both their host enqueue and their event time.
double unexplained_ms(double wall_ms, double host_ms, double timed_ms) {
  return wall_ms - std::max(host_ms, timed_ms);
}

// The reference's calls (trusted code, timed in the same rounds) ran far beyond their own events too.
bool gpu_contended(const WallControl& control) {
  return control.wall_ms_per_call > 0.0 && control.host_ms_per_call >= 0.0 &&
         control.wall_ms_per_call >
             kWallRatio * std::max(control.host_ms_per_call, control.timed_ms) + kWallSlackMs;
}

// The back-to-back calls of the cleanest round, against the rounds' median host enqueue time. Hidden
// work lengthens the candidate's calls in every round (the GPU runs it in each call); another process's
// work only in the rounds it overlaps, so one clean round clears the candidate. The host time stays the
// median: one round of host spinning must not raise that round's bound.
struct WallRound {
  double wall_ms = 0.0;
  double host_ms = 0.0;
};

std::optional<WallRound> cleanest_round(const std::vector<TimedBatch>& batches) {
  std::vector<double> wall;
  std::vector<double> host;
  for (const auto& batch : batches) {
    if (batch.wall_ms_per_call > 0.0 && batch.host_ms_per_call >= 0.0) {
      wall.push_back(batch.wall_ms_per_call);
      host.push_back(batch.host_ms_per_call);
    }
  }
  if (wall.empty()) {
    return std::nullopt;
  }
  return WallRound{*std::min_element(wall.begin(), wall.end()), measure::summarize(host).median};
}

void check_wall_per_call(const std::vector<TimedBatch>& batches, double timed_ms, const WallControl& control,
                         std::vector<rules::Finding>& findings) {
  const auto round = cleanest_round(batches);
  if (!round) {
    return;
  }
  const double bound = kWallRatio * std::max(round->host_ms, timed_ms) + kWallSlackMs;
  if (round->wall_ms <= bound) {
    return;
  }
  std::string control_note;
  if (gpu_contended(control)) {
    const double reference_extra =
        unexplained_ms(control.wall_ms_per_call, control.host_ms_per_call, control.timed_ms);
    if (unexplained_ms(round->wall_ms, round->host_ms, timed_ms) <=
        kWallRatio * reference_extra + kWallSlackMs) {
      return;  // both sides waited on the same outside work
    }
    control_note = fmt::format(
        " (the reference's calls in the same rounds: {:.4g} ms each against {:.4g} ms "
        "of events, far less unexplained time)",
        control.wall_ms_per_call, control.timed_ms);
  }
  findings.push_back(
      {"hidden-gpu-work", rules::Severity::reject,
       fmt::format("back-to-back timed calls took {:.4g} ms each with every stream synchronised, but the "
                   "host enqueued them in {:.4g} ms and the timing events measured {:.4g} ms (at most "
                   "{:.4g} ms expected), in the cleanest of the timing rounds{}: the GPU ran work the "
                   "events do not cover",
                   round->wall_ms, round->host_ms, timed_ms, bound, control_note),
       kNoLocation});
}

}  // namespace

std::vector<rules::Finding> timing_integrity_findings(const std::vector<TimedBatch>& batches,
                                                      const RuntimeEvidence& evidence,
                                                      double candidate_median_ms,
                                                      const WallControl& control) {
  std::vector<rules::Finding> findings;
  const long expected = evidence.own_launches_per_call();
  for (const auto& batch : batches) {
    check_timing_functions(batch, findings);
    check_wall_clock(batch, findings);
    check_launches(batch, expected, findings);
    check_side_streams(batch, findings);
    check_input_attributes(batch, findings);
    if (!findings.empty()) {
      return findings;  // one finding per kind is enough, and the first batch is the clearest
    }
  }
  check_profiled_kernel_time(evidence, candidate_median_ms, findings);
  if (findings.empty()) {
    check_wall_per_call(batches, candidate_median_ms, control, findings);
  }
  return findings;
}

}  // namespace kforge::verify
