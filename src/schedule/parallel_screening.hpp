#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "schedule/eval_job.hpp"
#include "verify/verdict.hpp"

namespace kforge::schedule {

// Screens each job's candidate on `device` (verify::screen: extract and the static rules, no Python)
// on up to `threads` threads, the caller's included. Element i is job i's verdict when screening
// decided it, nullopt when the job goes on to the workers. A request of several completions is
// answered in about the time of its slowest completion instead of the sum of them all.
std::vector<std::optional<verify::Verdict>> screen_in_parallel(const std::vector<EvalJob>& jobs,
                                                               const std::string& device,
                                                               std::size_t threads);

}  // namespace kforge::schedule
