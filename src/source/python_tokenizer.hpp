#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "source/source_location.hpp"

namespace kforge::source {

// Token categories of the Python 3.12 lexical grammar. Hard keywords get their own kind; soft
// keywords (match, case, type, _) are names, as in CPython.
enum class TokenKind : std::uint8_t {
  name,
  keyword,
  number,
  string,
  op,
  newline,
  indent,
  dedent,
  end_of_input
};

// The expression part of one f-string replacement field, e.g. `x + 1` in f"{x + 1:>{width}}".
// Fields of nested format specs are listed too; nested f-strings inside an expression are not
// (they are found again when the expression itself is tokenized).
struct FStringField {
  std::string expression;
  SourceLocation location;  // of the first character of `expression`
};

struct Token {
  TokenKind kind = TokenKind::end_of_input;
  // Exact source text (a string token keeps its prefix and quotes; INDENT holds the indentation;
  // NEWLINE, DEDENT and end_of_input are empty), except that a name is in NFKC, the form Python
  // compares identifiers in (`ｔｏｒｃｈ` is the name `torch`).
  std::string text;
  SourceLocation location;                   // first character
  SourceLocation end;                        // just past the last character
  std::vector<FStringField> fstring_fields;  // only for f-string tokens

  // The parser asks these many times per token: the first character decides most of them.
  bool is_op(std::string_view op) const { return kind == TokenKind::op && same_text(op); }
  bool is_keyword(std::string_view word) const { return kind == TokenKind::keyword && same_text(word); }
  bool is_name(std::string_view word) const { return kind == TokenKind::name && same_text(word); }
  bool same_text(std::string_view word) const {
    return text.size() == word.size() && (word.empty() || text.front() == word.front()) && text == word;
  }
};

struct Comment {
  std::string text;  // including the leading '#'
  SourceLocation location;
};

struct TokenizeError {
  std::string message;
  SourceLocation location;
};

struct TokenizeOptions {
  // Location of the first character; used when tokenizing a fragment such as an f-string field.
  SourceLocation start;
  // Treat the whole input as if inside brackets: newlines are plain whitespace and no NEWLINE,
  // INDENT or DEDENT tokens are produced (used for f-string replacement fields).
  bool inside_brackets = false;
};

struct TokenizeResult {
  std::vector<Token> tokens;  // ends with an end_of_input token when there is no error
  std::vector<Comment> comments;
  std::optional<TokenizeError> error;

  bool ok() const { return !error.has_value(); }
};

// Limits that keep tokenizing bounded on hostile input (the first two match CPython's).
inline constexpr int kMaxBracketDepth = 200;
inline constexpr int kMaxIndentLevels = 100;
inline constexpr int kMaxFStringNesting = 100;

// Tokenizes `source` (arbitrary bytes; UTF-8 expected). Never throws except std::bad_alloc and
// reports lexical errors through TokenizeResult::error.
TokenizeResult tokenize(std::string_view source, const TokenizeOptions& options = {});

// `(`, `[` or `{`, and `)`, `]` or `}`: what a scan over tokens counts to follow nesting.
inline bool is_opening_bracket(const Token& token) {
  return token.is_op("(") || token.is_op("[") || token.is_op("{");
}
inline bool is_closing_bracket(const Token& token) {
  return token.is_op(")") || token.is_op("]") || token.is_op("}");
}

// True for Python's hard keywords (False, None, True, and, as, ..., yield).
bool is_python_keyword(std::string_view word);

std::string_view to_string(TokenKind kind);

}  // namespace kforge::source
