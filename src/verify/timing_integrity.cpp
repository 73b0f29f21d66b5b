#include "verify/timing_integrity.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>

namespace kforge::verify {
namespace {

constexpr source::SourceLocation kNoLocation{0, 0};
// Allowed excess of profiled kernel time over the timed median: warm vs cold cache and clock jitter
// go the other way, so only a clear excess means work outside the timed stream.
constexpr double kHiddenWorkRatio = 1.5;
constexpr double kHiddenWorkSlackUs = 20.0;

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

}  // namespace

std::vector<rules::Finding> timing_integrity_findings(const std::vector<TimedBatch>& batches,
                                                      const RuntimeEvidence& evidence,
                                                      double candidate_median_ms) {
  std::vector<rules::Finding> findings;
  const long expected = evidence.own_launches_per_call();
  for (const auto& batch : batches) {
    check_timing_functions(batch, findings);
    check_wall_clock(batch, findings);
    check_launches(batch, expected, findings);
    if (!findings.empty()) {
      return findings;  // one finding per kind is enough, and the first batch is the clearest
    }
  }
  const double kernel_us = evidence.gpu_kernel_time_us();
  const double timed_us = candidate_median_ms * 1000.0;
  if (evidence.on_gpu && kernel_us > kHiddenWorkRatio * timed_us + kHiddenWorkSlackUs) {
    findings.push_back(
        {"hidden-gpu-work", rules::Severity::reject,
         fmt::format("the profiler saw {:.1f} µs of GPU kernels per forward but the timing events "
                     "measured {:.1f} µs: work runs on streams the timing does not cover",
                     kernel_us, timed_us),
         kNoLocation});
  }
  return findings;
}

}  // namespace kforge::verify
