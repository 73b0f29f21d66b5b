#pragma once

#include <string>

#include "runner/environment_probe.hpp"
#include "store/result_store.hpp"
#include "verify/eval_settings.hpp"

namespace kforge::schedule {

// The store key of one evaluation: problem and candidate contents, GPU model, versions and every
// setting that can change the verdict (sandbox mode included). Throws when a file cannot be read.
store::EvaluationIdentity evaluation_identity(const verify::EvalSettings& settings,
                                              const runner::EnvironmentFacts& facts);

// The store key of a problem's reference timing on one GPU model.
store::BaselineIdentity baseline_identity(const verify::EvalSettings& settings,
                                          const runner::EnvironmentFacts& facts);

}  // namespace kforge::schedule
