#pragma once

#include <array>
#include <string>
#include <string_view>

#include "optimize/tunable_knobs.hpp"
#include "source/module_index.hpp"

namespace kforge::optimize {

// Grouped program ordering for kernels launched on a 2-D grid. A kernel that reads tl.program_id(0)
// and tl.program_id(1) runs its programs in launch order, axis 0 fastest; a tiled matmul then sweeps a
// whole column of output tiles before the next, and its operands leave the L2 cache before they are
// used again. The rewrite computes new ids from the launch-order index in groups of G rows along axis
// 0 (Triton's matmul tutorial ordering, on the kernel's own 2-D grid) and uses them in place of the
// program_id calls. The new ids are a permutation of the grid for every grid shape and G, so what
// the kernel computes is unchanged; only which programs run together changes.

// The values a program_order knob may take: 0 keeps the launch order, 1 is row-major, 8 the matmul
// tutorial's group.
inline constexpr std::array<long long, 5> kProgramOrders{0, 1, 4, 8, 16};

// A program_order knob (value 0 = the original order) for each such kernel of `source`; kernels whose
// program ids cannot be rewritten go to search.fixed with the reason.
void add_program_order_knobs(std::string_view source, const source::ModuleIndex& index, KnobSearch& search);

// The text that replaces a program_order knob's literal for group size `group` (0: the literal itself).
std::string program_order_text(const Knob& knob, long long group);

}  // namespace kforge::optimize
