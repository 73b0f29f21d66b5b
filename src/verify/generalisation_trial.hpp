#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "rules/finding.hpp"
#include "verify/eval_context.hpp"

namespace kforge::verify {

// The generalisation trial (docs/verdict.md), the last probe of the runtime stage: the candidate runs once
// on the problem's second instance, at other sizes and with other constructor numbers
// (ProblemSession::generalisation), with its own ModelNew built from that instance's init inputs; its
// trace joins the runtime evidence. A failure (wrong outputs, an exception, a constructor that refuses
// the other arguments) adds a `generalisation` finding: reject under strict, warn under lenient.
// `details["generalisation"]` says what was run, or why the trial was not possible. Returns false when
// the evaluation ends here (the candidate process is gone and the stage marked, or an evaluation error).
bool run_generalisation_trial(EvalContext& context, std::vector<rules::Finding>& findings,
                              nlohmann::json& details);

}  // namespace kforge::verify
