#pragma once

#include <string>

#include "profile/profile_run.hpp"
#include "verify/eval_settings.hpp"

namespace kforge::cli {

// The profile run of `code` on `device`, with the problem, inputs and interpreter of an evaluation's
// settings (shared by kforge profile and kforge optimize); Nsight Compute and the ceilings are left
// to the caller.
inline profile::ProfileRunSettings profile_run_settings(const verify::EvalSettings& settings,
                                                        std::string code, const std::string& device,
                                                        const std::string& gpu_identity) {
  profile::ProfileRunSettings run;
  run.problem_path = settings.problem_path;
  run.candidate_code = std::move(code);
  run.device = device;
  run.seed = settings.seed;
  run.small = settings.small;
  run.sizes = settings.sizes;
  run.python = settings.python;
  run.gpu_identity = gpu_identity;
  return run;
}

}  // namespace kforge::cli
