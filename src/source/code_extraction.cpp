#include "source/code_extraction.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <utility>

#include "source/python_parser.hpp"
#include "source/text_file.hpp"

namespace kforge::source {
namespace {

constexpr std::array<std::string_view, 5> kPythonLanguages = {"python", "py", "python3", "py3", ""};

// Statement openings that mark unfenced text as Python source rather than prose.
constexpr std::array<std::string_view, 6> kPythonLineStarts = {"import ", "from ", "def ",
                                                               "class ",  "@",     "async def "};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (is_blank(text.front()) || text.front() == '\n')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (is_blank(text.back()) || text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

// Universal newlines, so line numbers agree with the tokenizer's.
std::string normalize_newlines(std::string_view text) {
  std::string normalized;
  normalized.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\r') {
      normalized.push_back(text[i]);
      continue;
    }
    normalized.push_back('\n');
    if (i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
    }
  }
  return normalized;
}

// Lines without their terminators; a final newline does not start another line.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

struct Fence {
  char symbol = '`';
  std::size_t length = 0;
  std::size_t indent = 0;
  std::string_view info;
};

std::optional<Fence> parse_opening_fence(std::string_view line) {
  Fence fence;
  while (fence.indent < line.size() && is_blank(line[fence.indent])) {
    ++fence.indent;
  }
  const std::string_view rest = line.substr(fence.indent);
  if (rest.empty() || (rest.front() != '`' && rest.front() != '~')) {
    return std::nullopt;
  }
  fence.symbol = rest.front();
  fence.length = std::min(rest.find_first_not_of(fence.symbol), rest.size());
  fence.info = trim(rest.substr(fence.length));
  // A backtick in the info string means inline code such as ```x```, not a fence.
  if (fence.length < 3 || (fence.symbol == '`' && fence.info.find('`') != std::string_view::npos)) {
    return std::nullopt;
  }
  return fence;
}

bool is_closing_fence(std::string_view line, const Fence& fence) {
  const std::string_view trimmed = trim(line);
  return trimmed.size() >= fence.length && trimmed.find_first_not_of(fence.symbol) == std::string_view::npos;
}

// "Python title=model.py" -> "python"; "{.py}" -> "py"; "python:model.py" -> "python".
std::string language_of(std::string_view info) {
  while (!info.empty() && (info.front() == '{' || info.front() == '.')) {
    info.remove_prefix(1);
  }
  std::string language;
  for (const char c : info) {
    if (!is_identifier_char(c) && c != '+' && c != '-') {
      break;
    }
    language.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  }
  return language;
}

std::string_view remove_indent(std::string_view line, std::size_t indent) {
  std::size_t removed = 0;
  while (removed < indent && removed < line.size() && is_blank(line[removed])) {
    ++removed;
  }
  return line.substr(removed);
}

bool defines_model_new(std::string_view code) {
  constexpr std::string_view kClassName = "ModelNew";
  for (const std::string_view line : split_lines(code)) {
    std::string_view rest = trim(line);
    if (!rest.starts_with("class") || rest.size() < 6 || !is_blank(rest[5])) {
      continue;
    }
    rest = trim(rest.substr(5));
    if (rest.starts_with(kClassName) &&
        (rest.size() == kClassName.size() || !is_identifier_char(rest[kClassName.size()]))) {
      return true;
    }
  }
  return false;
}

bool looks_like_python(std::string_view text) {
  const std::vector<std::string_view> lines = split_lines(text);
  return std::any_of(lines.begin(), lines.end(), [](std::string_view line) {
    return std::any_of(kPythonLineStarts.begin(), kPythonLineStarts.end(),
                       [line](std::string_view start) { return line.starts_with(start); });
  });
}

ExtractionResult plain_python(std::string_view text) {
  ExtractionResult result;
  result.code = ExtractedCode{std::string(text), false, 1, nullptr};
  return result;
}

ExtractionResult failure(std::string message) {
  ExtractionResult result;
  result.error = std::move(message);
  return result;
}

std::string describe_languages(const std::vector<CodeBlock>& blocks) {
  std::string languages;
  for (const CodeBlock& block : blocks) {
    languages += (languages.empty() ? "" : ", ") + block.language;
  }
  return languages;
}

ExtractionResult choose_block(const std::vector<CodeBlock>& blocks) {
  std::vector<const CodeBlock*> python_blocks;
  for (const CodeBlock& block : blocks) {
    if (is_python_language(block.language)) {
      python_blocks.push_back(&block);
    }
  }
  if (python_blocks.empty()) {
    return failure("no Python code block in the response (its " + std::to_string(blocks.size()) +
                   " code block(s) are marked " + describe_languages(blocks) + ")");
  }
  const auto defining = std::find_if(python_blocks.rbegin(), python_blocks.rend(),
                                     [](const CodeBlock* block) { return defines_model_new(block->code); });
  const CodeBlock* chosen = nullptr;
  if (defining != python_blocks.rend()) {
    chosen = *defining;
  } else if (python_blocks.size() == 1) {
    chosen = python_blocks.front();
  } else {
    return failure(
        std::to_string(python_blocks.size()) +
        " Python code blocks in the response and none defines class ModelNew; cannot tell which one "
        "is the candidate");
  }
  ExtractionResult result;
  result.code = ExtractedCode{chosen->code, true, chosen->first_line, nullptr};
  return result;
}

}  // namespace

bool is_python_language(std::string_view language) {
  return std::find(kPythonLanguages.begin(), kPythonLanguages.end(), language) != kPythonLanguages.end();
}

std::vector<CodeBlock> find_code_blocks(std::string_view markdown) {
  const std::string text = normalize_newlines(markdown);
  const std::vector<std::string_view> lines = split_lines(text);
  std::vector<CodeBlock> blocks;
  std::size_t index = 0;
  while (index < lines.size()) {
    const std::optional<Fence> fence = parse_opening_fence(lines[index]);
    ++index;
    if (!fence) {
      continue;
    }
    CodeBlock block;
    block.language = language_of(fence->info);
    block.first_line = static_cast<int>(index) + 1;
    while (index < lines.size() && !is_closing_fence(lines[index], *fence)) {
      block.code += remove_indent(lines[index], fence->indent);
      block.code += '\n';
      ++index;
    }
    block.closed = index < lines.size();
    ++index;  // the closing fence
    blocks.push_back(std::move(block));
  }
  return blocks;
}

ExtractionResult extract_code(std::string_view text) {
  if (auto parsed = std::make_shared<ParseResult>(parse_module(text)); parsed->ok()) {
    ExtractionResult result = plain_python(text);
    result.code->parsed = std::move(parsed);
    return result;
  }
  const std::vector<CodeBlock> blocks = find_code_blocks(text);
  if (!blocks.empty()) {
    return choose_block(blocks);
  }
  if (looks_like_python(normalize_newlines(text))) {
    return plain_python(text);  // Python with a syntax error, reported when it is parsed
  }
  return failure("the text is neither Python source nor markdown with a fenced code block");
}

std::string read_candidate_code(const std::filesystem::path& path) {
  auto extracted = extract_code(read_text_file(path));
  if (!extracted.ok()) {
    throw std::invalid_argument(path.string() + ": " + extracted.error);
  }
  return std::move(extracted.code->code);
}

}  // namespace kforge::source
