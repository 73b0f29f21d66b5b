#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "source/python_parser.hpp"
#include "source/source_location.hpp"

namespace kforge::source {

// A fenced code block (``` or ~~~) of a markdown text.
struct CodeBlock {
  std::string language;  // first word of the info string, lower-cased ("" when absent)
  std::string code;      // block content, fence indentation removed, newline-terminated
  int first_line = 1;    // 1-based line of the content's first line in the original text
  bool closed = true;    // false when the text ended before the closing fence
};

struct ExtractedCode {
  std::string code;
  bool from_markdown = false;
  // 1-based line of the original text where line 1 of `code` sits (1 for plain Python).
  int line_offset = 1;
  // The successful parse of `code` when extraction needed one anyway (plain Python), so static
  // analysis need not parse it again; null otherwise.
  std::shared_ptr<const ParseResult> parsed;

  // Maps a location in `code` back to the original text (columns are unchanged unless the fence
  // was indented; then they are off by that indentation).
  SourceLocation to_original(SourceLocation in_code) const {
    return {in_code.line + line_offset - 1, in_code.column};
  }
};

struct ExtractionResult {
  std::optional<ExtractedCode> code;
  std::string error;  // set exactly when `code` is empty

  bool ok() const { return code.has_value(); }
};

// All fenced code blocks, in order. An unclosed fence runs to the end of the text.
std::vector<CodeBlock> find_code_blocks(std::string_view markdown);

// True for the info-string languages treated as Python: python, py, python3, py3 and none.
bool is_python_language(std::string_view language);

// The candidate's Python code. Text that parses as Python is returned as is. Otherwise it is
// read as markdown (e.g. an LLM response): the last Python block defining `class ModelNew` is
// taken, else the only Python block; anything else is an error that says why.
ExtractionResult extract_code(std::string_view text);

// The candidate code of a file: extract_code over its text. Throws std::runtime_error when the file
// cannot be read and std::invalid_argument "PATH: why" when it holds no candidate code.
std::string read_candidate_code(const std::filesystem::path& path);

}  // namespace kforge::source
