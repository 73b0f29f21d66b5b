#pragma once

#include <cstddef>

namespace kforge::measure {

inline constexpr std::size_t kMinSamplesPerRound = 1;
inline constexpr std::size_t kMaxSamplesPerRound = 100;
inline constexpr double kDefaultRoundTargetMs = 50.0;

// Samples per round so that one round of a kernel taking single_sample_ms lasts about
// round_target_ms: long enough to amortize switching sides, short enough that reference and
// candidate alternate before clocks or thermals drift. Rounded to nearest and clamped to
// [kMinSamplesPerRound, kMaxSamplesPerRound]; a zero estimate (below timer resolution) gives the
// maximum. Throws std::invalid_argument for a NaN or negative estimate or a non-positive target.
std::size_t choose_samples_per_round(double single_sample_ms, double round_target_ms = kDefaultRoundTargetMs);

}  // namespace kforge::measure
