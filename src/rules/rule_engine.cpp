#include "rules/rule_engine.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "rules/rule_cached_state_in_forward.hpp"
#include "rules/rule_dispatch_interception.hpp"
#include "rules/rule_fallback_on_kernel_failure.hpp"
#include "rules/rule_file_and_network_io.hpp"
#include "rules/rule_host_round_trip.hpp"
#include "rules/rule_introspection.hpp"
#include "rules/rule_kernel_launched.hpp"
#include "rules/rule_monkeypatching.hpp"
#include "rules/rule_native_code.hpp"
#include "rules/rule_obfuscated_access.hpp"
#include "rules/rule_precision_downgrade.hpp"
#include "rules/rule_python_in_kernel.hpp"
#include "rules/rule_side_stream.hpp"
#include "rules/rule_threads_and_processes.hpp"
#include "rules/rule_torch_compute_in_forward.hpp"
#include "source/module_index.hpp"

namespace kforge::rules {

RuleEngine RuleEngine::with_default_rules() {
  RuleEngine engine;
  engine.add_rule(std::make_unique<KernelLaunchedRule>());
  engine.add_rule(std::make_unique<TorchComputeInForwardRule>());
  engine.add_rule(std::make_unique<ObfuscatedAccessRule>());
  engine.add_rule(std::make_unique<IntrospectionRule>());
  engine.add_rule(std::make_unique<MonkeypatchingRule>());
  engine.add_rule(std::make_unique<ThreadsAndProcessesRule>());
  engine.add_rule(std::make_unique<SideStreamRule>());
  engine.add_rule(std::make_unique<FileAndNetworkIoRule>());
  engine.add_rule(std::make_unique<FallbackOnKernelFailureRule>());
  engine.add_rule(std::make_unique<CachedStateInForwardRule>());
  engine.add_rule(std::make_unique<NativeCodeRule>());
  engine.add_rule(std::make_unique<PrecisionDowngradeRule>());
  engine.add_rule(std::make_unique<HostRoundTripRule>());
  engine.add_rule(std::make_unique<PythonInKernelRule>());
  engine.add_rule(std::make_unique<DispatchInterceptionRule>());
  return engine;
}

void RuleEngine::add_rule(std::unique_ptr<Rule> rule) {
  if (rule) {
    rules_.push_back(std::move(rule));
  }
}

std::vector<Finding> RuleEngine::run(const AnalysisContext& context) const {
  std::vector<Finding> findings;
  for (const auto& rule : rules_) {
    try {
      rule->check(context, findings);
    } catch (const source::IndexTooComplex&) {
      throw;  // a bound on the whole analysis: analyse_candidate() rejects the candidate
    } catch (const std::exception& error) {
      // Fail closed: a candidate that makes a rule throw must not pass the rule unchecked.
      findings.push_back({std::string(rule->id()),
                          Severity::reject,
                          "rule failed with an internal error, so the candidate could not be checked: " +
                              std::string(error.what()),
                          {1, 1}});
    }
  }
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return a.location < b.location || (a.location == b.location && a.rule_id < b.rule_id);
  });
  return findings;
}

}  // namespace kforge::rules
