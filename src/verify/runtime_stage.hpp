#pragma once

#include "verify/eval_context.hpp"

namespace kforge::verify {

// Honesty checks after correctness (docs/threat-model.md): the kernel traces of the trials
// (own Triton kernels ran, no ATen/cuBLAS compute, no side streams, nothing left running, no
// precision downgrade), then one more trial on fresh inputs that is rerun after the judge rewrites
// the same buffers (input-refresh: no output caches) and once more with the candidate's Triton
// kernels turned into no-ops (ghost-replay: the outputs must then be wrong). Returns true when no
// reject finding was made.
bool run_runtime_stage(EvalContext& context);

}  // namespace kforge::verify
