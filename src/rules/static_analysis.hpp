#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/analysis_context.hpp"
#include "rules/finding.hpp"
#include "source/python_parser.hpp"
#include "source/source_location.hpp"

namespace kforge::rules {

struct SyntaxErrorInfo {
  std::string message;
  source::SourceLocation location;
};

struct StaticReport {
  std::optional<SyntaxErrorInfo> syntax_error;  // set => parse failed, findings empty
  std::vector<Finding> findings;                // sorted by location
  std::vector<std::string> kernels;             // names of Triton kernels found
  std::vector<std::string> launched_kernels;    // kernels launched from ModelNew.forward's call graph
  bool has_model_new = false;
  bool has_forward = false;

  // Syntax error or any reject-severity finding.
  bool rejected() const;
};

// The single entry point of static analysis: parses `python_source`, indexes it and runs the
// default rules. `problem_source` is the reference problem's source (problem.py), which the
// precision rule reads to tell a float32 problem from a half-precision one; empty means unknown.
// Never throws: an internal failure becomes a reject finding "static-analysis-failed".
StaticReport analyse_candidate(std::string_view python_source, Profile profile = Profile::strict,
                               std::string_view problem_source = {});
// The same over `parsed`, the parse of `python_source` done already (source::ExtractedCode::parsed).
StaticReport analyse_candidate(const source::ParseResult& parsed, std::string_view python_source,
                               Profile profile = Profile::strict, std::string_view problem_source = {});

// Moves every location of `report` down by `line_offset - 1` lines, mapping locations in code
// extracted from a markdown response (source::ExtractedCode::line_offset) back to the response.
void shift_report_lines(StaticReport& report, int line_offset);

}  // namespace kforge::rules
