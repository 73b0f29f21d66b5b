#pragma once

#include "verify/eval_context.hpp"

namespace kforge::verify {

// The generalisation trial (docs/verdict.md): once the correctness trials pass, the candidate runs once
// on the problem's second instance, at other sizes and with other constructor numbers
// (ProblemSession::generalisation), with its own ModelNew built from that instance's init inputs. A
// failure (wrong outputs, an exception, a constructor that refuses the other arguments) rejects under
// strict with the check `generalisation` and is a warning under lenient; a crash or timeout rejects under
// both. The correctness stage's details say what was run, or why the trial was not possible.
// Returns false when the evaluation ends here (stage rejected or evaluation failed).
bool run_generalisation_trial(EvalContext& context);

}  // namespace kforge::verify
