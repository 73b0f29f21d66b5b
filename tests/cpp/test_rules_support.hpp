#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "rules/analysis_context.hpp"
#include "rules/finding.hpp"
#include "rules/rule.hpp"
#include "source/module_index.hpp"
#include "source/python_parser.hpp"
#include "source/source_location.hpp"

// Helpers shared by the tests of the individual static rules.
namespace kforge::rules::testing {

// Parses `source` (a syntax error fails the test), indexes it and runs `rule` alone.
inline std::vector<Finding> run_rule(const Rule& rule, std::string_view source,
                                     Profile profile = Profile::strict,
                                     std::string_view problem_source = {}) {
  const source::ParseResult parsed = source::parse_module(source);
  EXPECT_TRUE(parsed.ok()) << parsed.error->message << " at " << parsed.error->location;
  if (!parsed.ok()) {
    return {};
  }
  const source::ModuleIndex index = source::build_module_index(*parsed.module);
  std::vector<Finding> findings;
  rule.check(AnalysisContext{*parsed.module, index, source, profile, problem_source}, findings);
  return findings;
}

// Location of the `occurrence`-th (0-based) appearance of `needle` in `source` (ASCII sources).
inline source::SourceLocation location_of(std::string_view source, std::string_view needle,
                                          int occurrence = 0) {
  std::size_t position = source.find(needle);
  for (int i = 0; i < occurrence && position != std::string_view::npos; ++i) {
    position = source.find(needle, position + 1);
  }
  EXPECT_NE(position, std::string_view::npos) << "`" << needle << "` not in the source";
  if (position == std::string_view::npos) {
    return {0, 0};
  }
  const std::string_view before = source.substr(0, position);
  const int line = static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1;
  const std::size_t line_start = before.rfind('\n');
  const int column =
      static_cast<int>(position - (line_start == std::string_view::npos ? 0 : line_start + 1)) + 1;
  return {line, column};
}

inline std::vector<source::SourceLocation> locations(const std::vector<Finding>& findings) {
  std::vector<source::SourceLocation> result;
  for (const Finding& finding : findings) {
    result.push_back(finding.location);
  }
  return result;
}

inline bool has_finding_at(const std::vector<Finding>& findings, source::SourceLocation location) {
  return std::any_of(findings.begin(), findings.end(),
                     [location](const Finding& finding) { return finding.location == location; });
}

inline bool all_have_severity(const std::vector<Finding>& findings, Severity severity) {
  return std::all_of(findings.begin(), findings.end(),
                     [severity](const Finding& finding) { return finding.severity == severity; });
}

inline bool mentions(const Finding& finding, std::string_view text) {
  return finding.message.find(text) != std::string::npos;
}

// Imports and a kernel with a launching helper: candidates only need to add ModelNew.
constexpr std::string_view kPrelude = R"PY(import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch_copy(x):
    out = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
)PY";

inline std::string with_prelude(std::string_view rest) { return std::string(kPrelude) + std::string(rest); }

}  // namespace kforge::rules::testing
