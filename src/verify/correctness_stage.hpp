#pragma once

#include "verify/eval_context.hpp"

namespace kforge::verify {

// Runs settings.trials trials, each with fresh inputs from its own seed: the judge builds inputs and
// the reference, the candidate runs on the shared inputs, the judge compares. Stops at the first
// failing trial. Returns true when every trial passed.
bool run_correctness_stage(EvalContext& context);

// The judge's first failure message of a check_trial reply.
std::string first_failure(const nlohmann::json& check);
// One reject finding per failure of a check_trial reply, named by the judge's check ids
// (output-mismatch, output-type, input-mutation), each message prefixed with `prefix`.
std::vector<rules::Finding> failure_findings(const nlohmann::json& check, const std::string& prefix);

}  // namespace kforge::verify
