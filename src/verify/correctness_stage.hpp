#pragma once

#include "verify/eval_context.hpp"

namespace kforge::verify {

// Runs settings.trials trials, each with fresh inputs from its own seed: the judge builds inputs and
// the reference, the candidate runs on the shared inputs, the judge compares. Stops at the first
// failing trial. Returns true when every trial passed.
bool run_correctness_stage(EvalContext& context);

}  // namespace kforge::verify
