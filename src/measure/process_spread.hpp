#pragma once

#include "measure/speedup_estimate.hpp"

namespace kforge::measure {

// How far one process's median of a call moves from another's (issue 31): where the call's memory and
// the CUDA stream's hardware queue land differs from process to process, and a small call carries
// that offset in every sample, so a bootstrap over one process's samples cannot see it. Relative
// standard deviation of one process's median for a call of median_ms:
//   kProcessSpreadFloor + kProcessSpreadAtOneMicrosecond / sqrt(median in µs).
// Calibrated on 138 self-comparisons of bench/timing_fidelity on H200s (docs/benchmarks.md, sessions 15,
// 17 and 18: 3.5 µs to 94 ms, both modes): the 95% term alone, 1.96 x sqrt(2) x this, holds 131 (95%) of
// their self-speedups. About 2.0% at 4 µs, 0.76% at 30 µs, 0.16% at 1 ms.
inline constexpr double kProcessSpreadFloor = 0.0003;
inline constexpr double kProcessSpreadAtOneMicrosecond = 0.04;

double process_relative_sd(double median_ms);

// The speedup's interval with the process term: the bootstrap's half-widths (in log space, each side of
// the estimate) combined in quadrature with 1.96 x the ratio's process spread, sqrt(sd_ref^2 + sd_cand^2).
// Used when the two sides were timed in different processes; the estimate itself is unchanged.
SpeedupEstimate with_process_spread(const SpeedupEstimate& within_process, double reference_median_ms,
                                    double candidate_median_ms);

}  // namespace kforge::measure
