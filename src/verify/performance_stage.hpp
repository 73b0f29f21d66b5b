#pragma once

#include "verify/eval_context.hpp"

namespace kforge::verify {

// Times reference and candidate in alternating rounds under the GPU's exclusive timing lease until
// the noise target or a limit is reached; reports medians, spread and the speedup with a 95% CI.
// On the CPU it records "skipped" — the interpreter's timings mean nothing.
void run_performance_stage(EvalContext& context);

}  // namespace kforge::verify
