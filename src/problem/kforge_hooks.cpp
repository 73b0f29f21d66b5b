#include "problem/kforge_hooks.hpp"

#include <sstream>
#include <utility>
#include <vector>

#include "source/python_tokenizer.hpp"

namespace kforge::problem {
namespace {

// First and last line (1-based) of each module-level statement that assigns a KFORGE_* name.
std::vector<std::pair<int, int>> hook_statements(std::string_view source) {
  const auto tokens = source::tokenize(source);
  std::vector<std::pair<int, int>> found;
  if (!tokens.ok()) {
    return found;
  }
  int depth = 0;
  bool line_start = true;
  int hook_line = 0;
  const auto& list = tokens.tokens;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& token = list[i];
    if (token.kind == source::TokenKind::indent || token.kind == source::TokenKind::dedent) {
      depth += token.kind == source::TokenKind::indent ? 1 : -1;
      continue;
    }
    if (token.kind == source::TokenKind::newline) {
      if (hook_line > 0) {
        found.emplace_back(hook_line, token.location.line);
      }
      hook_line = 0;
      line_start = true;
      continue;
    }
    if (line_start && depth == 0 && token.kind == source::TokenKind::name &&
        token.text.rfind("KFORGE_", 0) == 0 && i + 1 < list.size() &&
        (list[i + 1].is_op("=") || list[i + 1].is_op(":"))) {
      hook_line = token.location.line;
    }
    line_start = false;
  }
  return found;
}

std::vector<std::string> split_lines(std::string_view source) {
  std::vector<std::string> lines;
  std::istringstream stream{std::string(source)};
  for (std::string line; std::getline(stream, line);) {
    lines.push_back(line);
  }
  return lines;
}

bool is_comment(const std::string& line) {
  const auto first = line.find_first_not_of(" \t");
  return first != std::string::npos && line[first] == '#';
}

bool is_blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

}  // namespace

bool defines_small_sizes(std::string_view problem_source) {
  const auto tokens = source::tokenize(problem_source);
  if (!tokens.ok()) {
    return false;
  }
  int depth = 0;
  bool line_start = true;
  const auto& list = tokens.tokens;
  for (std::size_t i = 0; i + 1 < list.size(); ++i) {
    const auto& token = list[i];
    if (token.kind == source::TokenKind::indent || token.kind == source::TokenKind::dedent) {
      depth += token.kind == source::TokenKind::indent ? 1 : -1;
      continue;
    }
    if (line_start && depth == 0 && token.is_name("KFORGE_SMALL") &&
        (list[i + 1].is_op("=") || list[i + 1].is_op(":"))) {
      return true;
    }
    line_start = token.kind == source::TokenKind::newline;
  }
  return false;
}

std::string without_kforge_hooks(std::string_view problem_source) {
  const auto statements = hook_statements(problem_source);
  if (statements.empty()) {
    return std::string(problem_source);
  }
  auto lines = split_lines(problem_source);
  std::vector<bool> drop(lines.size() + 1, false);
  for (const auto& [first, last] : statements) {
    for (int line = first; line <= last && line <= static_cast<int>(lines.size()); ++line) {
      drop[static_cast<std::size_t>(line - 1)] = true;
    }
    for (int line = first - 1; line >= 1 && is_comment(lines[static_cast<std::size_t>(line - 1)]); --line) {
      drop[static_cast<std::size_t>(line - 1)] = true;  // the comment that explains the hook
    }
  }
  const auto hooks = drop;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    // Where a dropped block sat between two blank lines, one of them goes too.
    const bool block_ends = hooks[i] && !hooks[i + 1];
    if (block_ends && i + 1 < lines.size() && is_blank(lines[i + 1])) {
      std::size_t start = i;
      while (start > 0 && hooks[start - 1]) {
        --start;
      }
      if (start == 0 || is_blank(lines[start - 1])) {
        drop[i + 1] = true;
      }
    }
  }
  std::string text;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!drop[i]) {
      text += lines[i] + "\n";
    }
  }
  return text;
}

}  // namespace kforge::problem
