#include "rules/static_analysis.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "rules/name_resolution.hpp"
#include "rules/rule_engine.hpp"
#include "rules/rule_support.hpp"
#include "source/module_index.hpp"
#include "source/python_parser.hpp"

namespace kforge::rules {
namespace {

constexpr std::string_view kInternalFailureRule = "static-analysis-failed";

StaticReport analyse(const source::ParseResult& parsed, std::string_view python_source, Profile profile,
                     std::string_view problem_source) {
  StaticReport report;
  if (!parsed.ok()) {
    report.syntax_error = SyntaxErrorInfo{parsed.error->message, parsed.error->location};
    return report;
  }
  const source::ModuleIndex index = source::build_module_index(*parsed.module);
  for (const source::KernelInfo& kernel : index.kernels) {
    report.kernels.push_back(kernel.name);
  }
  report.launched_kernels = index.launched_kernels();
  report.has_model_new = index.model.has_value();
  report.has_forward = index.model.has_value() && index.model->has_forward;
  const NameResolver names(*parsed.module);
  const std::vector<ReadReference> references = read_references(*parsed.module, names);
  AnalysisContext context{*parsed.module, index, python_source, profile, problem_source, &names};
  context.references = &references;
  report.findings = RuleEngine::with_default_rules().run(context);
  return report;
}

StaticReport internal_failure(std::string_view what) {
  StaticReport report;
  report.findings.push_back({std::string(kInternalFailureRule),
                             Severity::reject,
                             "static analysis failed: " + std::string(what),
                             {1, 1}});
  return report;
}

}  // namespace

bool StaticReport::rejected() const {
  return syntax_error.has_value() ||
         std::any_of(findings.begin(), findings.end(),
                     [](const Finding& finding) { return finding.severity == Severity::reject; });
}

StaticReport analyse_candidate(std::string_view python_source, Profile profile,
                               std::string_view problem_source) {
  try {
    return analyse(source::parse_module(python_source), python_source, profile, problem_source);
  } catch (const std::exception& error) {
    return internal_failure(error.what());
  } catch (...) {
    return internal_failure("unknown error");
  }
}

StaticReport analyse_candidate(const source::ParseResult& parsed, std::string_view python_source,
                               Profile profile, std::string_view problem_source) {
  try {
    return analyse(parsed, python_source, profile, problem_source);
  } catch (const std::exception& error) {
    return internal_failure(error.what());
  } catch (...) {
    return internal_failure("unknown error");
  }
}

void shift_report_lines(StaticReport& report, int line_offset) {
  const int offset = line_offset - 1;
  if (report.syntax_error) {
    report.syntax_error->location.line += offset;
  }
  for (Finding& finding : report.findings) {
    finding.location.line += offset;
  }
}

}  // namespace kforge::rules
