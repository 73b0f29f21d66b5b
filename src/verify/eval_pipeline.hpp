#pragma once

#include "verify/eval_settings.hpp"
#include "verify/verdict.hpp"

namespace kforge::verify {

// Runs extract → static → compile → correctness → performance and returns the verdict. Never throws:
// every failure, the candidate's or the environment's, ends up in the verdict.
Verdict evaluate(const EvalSettings& settings);

}  // namespace kforge::verify
