#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "source/source_location.hpp"

namespace kforge::optimize {

// What a knob changes; the tuner searches each kind over its own range.
enum class KnobKind { block_size, group_size, num_warps, num_stages, autotune_config, program_order };
std::string_view knob_kind_name(KnobKind kind);

// A program_order knob's call `tl.program_id(0)` or `(1)`: its bytes within the knob's literal.
struct ProgramIdCall {
  std::size_t offset = 0;
  std::size_t length = 0;
  int axis = 0;
};

// What a program_order knob's rewrite needs: the kernel's triton.language alias, the indentation of its
// body, and the program_id calls the reordered ids replace.
struct ProgramOrderSite {
  std::string language;  // "tl"
  std::string indent;
  std::vector<ProgramIdCall> calls;
};

// Where a knob's value is written. A launch option (num_warps, num_stages) of a kernel without autotune
// configs is a knob even when the launch computes it at run time or leaves it out: neither changes what
// the kernel computes. At run time: value kRunTimeValue keeps the expression, another value replaces it
// with that literal. Left out: the start value is Triton's default (writes nothing), another value adds
// `, num_warps=8` after the launch's last argument (the knob's literal is empty, at that place).
enum class KnobSite { literal, run_time, absent };
inline constexpr long long kRunTimeValue = -1;
inline constexpr long long kDefaultNumWarps = 4;   // Triton's default for a launch that gives none
inline constexpr long long kDefaultNumStages = 3;  // Triton's default on CUDA

// One integer literal of the candidate's source that sets a launch parameter of a Triton kernel: a
// tl.constexpr block or group size, num_warps or num_stages, given at a launch site directly, through
// a module constant or a class attribute, or in the only triton.Config of an autotuned kernel.
// Changing it changes only how the kernel runs. An autotune_config knob is instead a kernel's list of
// autotune configs: value -1 keeps the list (the autotuner picks at run time), value i pins config i.
// A program_order knob is instead a kernel launched on a 2-D grid without grouped ordering: value 0
// keeps its order, value G renumbers its programs in groups of G along axis 0 (see program_order.hpp);
// its literal is the span of the kernel's body from the first statement to the last program_id call.
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
  ProgramOrderSite order;            // program_order: where the reordering goes
  KnobSite site = KnobSite::literal;
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
