#include "schedule/evaluation_identity.hpp"

#include <cstdlib>
#include <stdexcept>

#include "runner/environment_variable.hpp"
#include "source/text_file.hpp"
#include "store/content_hash.hpp"
#include "verify/input_seeds.hpp"

namespace kforge::schedule {
namespace {

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

store::EvaluationIdentity evaluation_identity(const verify::EvalSettings& settings,
                                              const runner::EnvironmentFacts& facts) {
  const std::string candidate =
      settings.candidate_text ? *settings.candidate_text : source::read_text_file(settings.candidate_path);
  nlohmann::json relevant = {
      {"device_kind", facts.gpu == "cpu" ? "cpu" : "cuda"},
      {"trials", settings.trials},
      {"seed", settings.seed},
      {"input_key", verify::process_input_key().fingerprint},
      {"atol", optional_number(settings.atol)},
      {"rtol", optional_number(settings.rtol)},
      {"small", settings.small},
      {"sizes", settings.sizes},
      {"timeout_s", settings.timeout_s},
      {"perf", settings.measure_performance},
      {"noise_target", settings.timing.noise_target},
      {"time_budget_s", settings.timing.time_budget_s},
      {"profile", settings.profile == rules::Profile::strict ? "strict" : "lenient"},
      {"generalise", settings.generalise},
      {"baseline", settings.baseline},
      {"reference_beside", settings.reference_beside},
      {"sandbox", runner::environment_variable("KFORGE_SANDBOX")},
      {"sandbox_disable", runner::environment_variable("KFORGE_SANDBOX_DISABLE")},
      {"memory_gib", runner::environment_variable("KFORGE_CANDIDATE_MEMORY_GIB")},
      {"gpu_memory_gib", runner::environment_variable("KFORGE_CANDIDATE_GPU_MEMORY_GIB")}};
  if (settings.derived_call_limits) {  // a slow candidate may time out under them: not the same verdict
    relevant["call_limits"] = "derived";
  }
  return {store::sha256_hex(source::read_text_file(settings.problem_path)), store::sha256_hex(candidate),
          facts.gpu, facts.versions, std::move(relevant)};
}

store::BaselineIdentity baseline_identity(const verify::EvalSettings& settings,
                                          const runner::EnvironmentFacts& facts) {
  return {store::sha256_hex(source::read_text_file(settings.problem_path)),
          facts.gpu,
          facts.versions,
          {{"small", settings.small}, {"sizes", settings.sizes}, {"seed", settings.seed}},
          settings.baseline};
}

}  // namespace kforge::schedule
