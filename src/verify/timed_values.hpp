#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace kforge::verify {

// The timed calls are checked with fresh values (docs/threat-model.md, "timed-output-mismatch"): the
// judge makes several input value sets from other seeds, and between timing samples one of them is
// copied into the same timing input buffers, in an order drawn here, so a candidate cannot tell a
// timed call from a checked one by its inputs (object, pointer, version, call count) and serve a
// cached answer.

inline constexpr std::size_t kMaxTimingValueSets = 4;
inline constexpr std::uint64_t kTimingValueSetBytes = std::uint64_t{512} << 20;  // all sets together

// How many value sets to rotate through when one set holds `set_bytes`: its inputs and its outputs (the
// judge keeps each set's reference outputs, the candidate worker the whole last output of each set, so
// a problem with a 4 GiB output and 100 MB of inputs gets two sets, not four: 16 GiB less on each
// side). Up to kMaxTimingValueSets within kTimingValueSetBytes, and never fewer than two (the judge may
// still give fewer when the GPU has no room or get_inputs() changes shapes between seeds).
std::size_t timing_value_sets(std::uint64_t set_bytes);

// The value set of each of `count` samples: uniform over the sets, never the same set twice in a row
// (with two or more sets), the first one differing from `previous` (-1: none).
std::vector<int> value_set_order(std::size_t count, std::size_t sets, std::mt19937_64& random, int previous);

}  // namespace kforge::verify
