// libFuzzer target for everything that reads untrusted candidate text before any Python runs: code
// extraction from an LLM response, the tokenizer, the parser, the module index, the rule engine and
// the optimizer's knob finder and rewrite.
// Besides crashes, hangs and memory blow-ups (found by the sanitizers and libFuzzer's limits), it
// aborts when an internal error surfaces as a finding, since analyse_candidate() hides exceptions.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "optimize/tunable_knobs.hpp"
#include "rules/analysis_context.hpp"
#include "rules/static_analysis.hpp"
#include "source/code_extraction.hpp"
#include "source/module_index.hpp"
#include "source/python_parser.hpp"
#include "source/python_tokenizer.hpp"

namespace {

using kforge::rules::Profile;
using kforge::rules::StaticReport;
using kforge::source::SourceLocation;

// Ends the run with a message so libFuzzer records the input as a crash.
[[noreturn]] void fail(const char* what) {
  std::fputs(what, stderr);
  std::fputc('\n', stderr);
  std::abort();
}

void check_location(SourceLocation location, const char* what) {
  if (location.line < 1 || location.column < 1) {
    fail(what);
  }
}

// The tokenizer on its own, also in the bracket mode used for f-string fields.
void fuzz_tokenizer(std::string_view text) {
  for (const bool inside_brackets : {false, true}) {
    const kforge::source::TokenizeResult result = kforge::source::tokenize(text, {{1, 1}, inside_brackets});
    if (result.ok() &&
        (result.tokens.empty() || result.tokens.back().kind != kforge::source::TokenKind::end_of_input)) {
      fail("tokenize() succeeded without an end_of_input token");
    }
    if (!result.ok()) {
      check_location(result.error->location, "tokenize() error location below 1:1");
    }
  }
}

// The parser and the module index on the raw text, with every query the rules use.
void fuzz_parser_and_index(std::string_view text) {
  const kforge::source::ParseResult parsed = kforge::source::parse_module(text);
  if (!parsed.ok()) {
    check_location(parsed.error->location, "parse_module() error location below 1:1");
    return;
  }
  if (parsed.module == nullptr) {
    fail("parse_module() succeeded without a module");
  }
  std::optional<kforge::source::ModuleIndex> built;
  try {
    built = kforge::source::build_module_index(*parsed.module);
  } catch (const kforge::source::IndexTooComplex&) {
    return;  // the work bound, an expected outcome on crafted input
  }
  const kforge::source::ModuleIndex& index = *built;
  // find_kernel() is linear: looking up every kernel would make the harness itself quadratic.
  if (!index.kernels.empty() && index.find_kernel(index.kernels.back().name) == nullptr) {
    fail("ModuleIndex::find_kernel() misses a listed kernel");
  }
  static_cast<void>(index.launched_kernels());
  static_cast<void>(index.unlaunched_kernels());
}

// An internal error inside analyse_candidate() or a rule is turned into a finding; here it is a bug.
void check_report(const StaticReport& report) {
  if (report.syntax_error) {
    check_location(report.syntax_error->location, "syntax error location below 1:1");
  }
  for (const kforge::rules::Finding& finding : report.findings) {
    // IndexTooComplex is the one expected failure: the work bound of build_module_index().
    if (finding.rule_id == "static-analysis-failed" &&
        finding.message.find("module too complex to") == std::string::npos) {
      fail(("analyse_candidate() failed internally: " + finding.message).c_str());
    }
    if (finding.message.starts_with("rule failed with an internal error")) {
      fail(("rule " + finding.rule_id + " threw: " + finding.message).c_str());
    }
  }
}

// What eval does with a candidate: extract the code, then analyse it under both profiles.
void fuzz_pipeline(std::string_view text) {
  static_cast<void>(kforge::source::find_code_blocks(text));
  const kforge::source::ExtractionResult extracted = kforge::source::extract_code(text);
  if (extracted.ok() == !extracted.error.empty()) {
    fail("extract_code() must return either code or an error");
  }
  if (!extracted.ok()) {
    return;
  }
  for (const Profile profile : {Profile::strict, Profile::lenient}) {
    StaticReport report = kforge::rules::analyse_candidate(extracted.code->code, profile);
    check_report(report);
    kforge::rules::shift_report_lines(report, extracted.code->line_offset);
  }
}

// The knob finder on a source that parses, and its rewrite with every knob moved to its last choice:
// the rewritten source must parse too (the tuner sends it to the verdict pipeline as a candidate).
void fuzz_knobs(std::string_view text) {
  std::optional<kforge::optimize::KnobSearch> search;
  try {
    search = kforge::optimize::find_knobs(text);
  } catch (const std::invalid_argument&) {
    return;  // the source does not parse
  } catch (const kforge::source::IndexTooComplex&) {
    return;  // the module index's work bound
  }
  if (search->knobs.empty()) {
    return;
  }
  std::vector<long long> values;
  for (const auto& knob : search->knobs) {
    values.push_back(knob.choices.empty() ? knob.value : knob.choices.back());
  }
  std::string rewritten;
  try {
    rewritten = kforge::optimize::rewrite_knobs(text, search->knobs, values);
  } catch (const std::invalid_argument& error) {
    fail((std::string("rewrite_knobs() refused the knobs find_knobs() found: ") + error.what()).c_str());
  }
  if (!kforge::source::parse_module(rewritten).ok()) {
    fail("rewrite_knobs() wrote a source that does not parse");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): libFuzzer hands over raw bytes.
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz_tokenizer(text);
  fuzz_parser_and_index(text);
  fuzz_pipeline(text);
  fuzz_knobs(text);
  return 0;
}
