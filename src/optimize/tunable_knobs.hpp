#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "source/source_location.hpp"

namespace kforge::optimize {

// What a knob changes; the tuner searches each kind over its own range.
enum class KnobKind { block_size, group_size, num_warps, num_stages, autotune_config };
std::string_view knob_kind_name(KnobKind kind);

// One integer literal of the candidate's source that sets a launch parameter of a Triton kernel: a
// tl.constexpr block or group size, num_warps or num_stages, given at a launch site directly, through
// a module constant or a class attribute, or in the only triton.Config of an autotuned kernel.
// Changing it changes only how the kernel runs. An autotune_config knob is instead a kernel's list of
// autotune configs: value -1 keeps the list (the autotuner picks at run time), value i pins config i.
struct Knob {
  std::string name;  // the launch keyword: "BLOCK_M", "num_warps"
  KnobKind kind = KnobKind::block_size;
  std::string where;                 // "launch of matmul_kernel at 41:9", "module constant BLOCK at 12:1"
  std::vector<std::string> kernels;  // the kernels whose launches it sets
  source::SourceLocation location;   // of the literal
  std::string literal;               // its source text (autotune_config: the whole list)
  long long value = 0;
  std::vector<long long> choices;    // the values the tuner may try, ascending, the current one included
  std::vector<std::string> configs;  // autotune_config: the source text of each config
};

struct KnobSearch {
  std::vector<Knob> knobs;
  // Launch parameters seen but not tunable by rewriting a literal, each with the reason (computed from
  // the inputs, set by an autotuner, assigned more than once).
  std::vector<std::string> fixed;
};

// The knobs of a candidate. Throws std::invalid_argument when the source does not parse.
KnobSearch find_knobs(std::string_view source);

// The source with each knob's literal replaced by the value at the same index. Throws
// std::invalid_argument when a value is not one of the knob's choices or a literal is not where the
// knob says (the source changed since find_knobs).
std::string rewrite_knobs(std::string_view source, const std::vector<Knob>& knobs,
                          const std::vector<long long>& values);

}  // namespace kforge::optimize
