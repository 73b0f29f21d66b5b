#include "source/python_tokenizer.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <utility>

#include "source/located_failure.hpp"
#include "source/unicode_normalization.hpp"

namespace kforge::source {
namespace {

constexpr std::array<std::string_view, 35> kKeywords = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

// Per first character, a bit per length of the keywords starting with it: most names (x, tl,
// torch...) are told apart from every keyword without a string comparison.
constexpr std::array<std::uint16_t, 128> keyword_shapes() {
  std::array<std::uint16_t, 128> shapes{};
  for (const std::string_view keyword : kKeywords) {
    shapes.at(static_cast<unsigned char>(keyword.front())) |=
        static_cast<std::uint16_t>(1U << keyword.size());
  }
  return shapes;
}
constexpr std::array<std::uint16_t, 128> kKeywordShapes = keyword_shapes();

constexpr std::array<std::string_view, 5> kThreeCharOperators = {"**=", "//=", ">>=", "<<=", "..."};
constexpr std::array<std::string_view, 19> kTwoCharOperators = {
    "**", "//", ">>", "<<", "<=", ">=", "==", "!=", "->", ":=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="};
constexpr std::string_view kOneCharOperators = "+-*/%@&|^~<>()[]{},:;.=";

// Keywords that CPython still accepts glued to a number (with a warning), e.g. `1if x else 2`.
constexpr std::array<std::string_view, 8> kKeywordsAllowedAfterNumber = {"and", "else", "for", "if",
                                                                         "in",  "is",   "not", "or"};

constexpr int kMaxIndentWidth = 1'000'000;

// Internal error carrier: thrown where lexing fails, turned into TokenizeError by tokenize().
class LexFailure : public detail::LocatedFailure {
 public:
  using LocatedFailure::LocatedFailure;
};

struct CodePoint {
  char32_t value = 0;
  std::size_t length = 0;
};

unsigned char byte_at(std::string_view text, std::size_t index) {
  return static_cast<unsigned char>(text[index]);
}

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U; }

// Decodes one UTF-8 sequence; rejects overlong forms, surrogates and values past U+10FFFF.
std::optional<CodePoint> decode_utf8(std::string_view text, std::size_t pos) {
  const unsigned char lead = byte_at(text, pos);
  if (lead < 0x80U) {
    return CodePoint{lead, 1};
  }
  std::size_t length = 0;
  char32_t value = 0;
  char32_t min_value = 0;
  if ((lead & 0xE0U) == 0xC0U) {
    length = 2;
    value = lead & 0x1FU;
    min_value = 0x80;
  } else if ((lead & 0xF0U) == 0xE0U) {
    length = 3;
    value = lead & 0x0FU;
    min_value = 0x800;
  } else if ((lead & 0xF8U) == 0xF0U) {
    length = 4;
    value = lead & 0x07U;
    min_value = 0x10000;
  } else {
    return std::nullopt;
  }
  if (text.size() - pos < length) {
    return std::nullopt;
  }
  for (std::size_t i = 1; i < length; ++i) {
    const unsigned char next = byte_at(text, pos + i);
    if ((next & 0xC0U) != 0x80U) {
      return std::nullopt;
    }
    value = (value << 6U) | (next & 0x3FU);
  }
  if (value < min_value || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
    return std::nullopt;
  }
  return CodePoint{value, length};
}

struct CodePointRange {
  char32_t first;
  char32_t last;
};

// Punctuation, symbols, spaces and emoji that can never be part of an identifier. Other non-ASCII
// code points are accepted as identifier characters (an approximation of XID_Start/XID_Continue).
constexpr std::array<CodePointRange, 20> kNonIdentifierRanges = {{
    {0x80, 0xA9},     {0xAB, 0xB4},     {0xB6, 0xB9},     {0xBB, 0xBF},     {0xD7, 0xD7},
    {0xF7, 0xF7},     {0x2000, 0x206F}, {0x20A0, 0x20CF}, {0x2190, 0x23FF}, {0x2460, 0x2BFF},
    {0x2E00, 0x2E7F}, {0x3000, 0x3004}, {0x3008, 0x3020}, {0xE000, 0xF8FF}, {0xFE10, 0xFE1F},
    {0xFE30, 0xFE4F}, {0xFEFF, 0xFEFF}, {0xFF01, 0xFF20}, {0xFFF0, 0xFFFF}, {0x1F000, 0x1FAFF},
}};

bool is_identifier_code_point(char32_t value) {
  return std::none_of(
      kNonIdentifierRanges.begin(), kNonIdentifierRanges.end(),
      [value](const CodePointRange& range) { return value >= range.first && value <= range.last; });
}

bool is_non_printable(char32_t value) {
  return value < 0x20 || value == 0x7F || (value >= 0x80 && value <= 0xA0) ||
         (value >= 0x2000 && value <= 0x200F) || (value >= 0x2028 && value <= 0x202F) ||
         (value >= 0x205F && value <= 0x206F) || value == 0x3000 || value == 0xFEFF;
}

std::string hex_code(char32_t value) {
  constexpr std::string_view kDigits = "0123456789ABCDEF";
  std::string digits;
  do {
    digits.insert(digits.begin(), kDigits[value % 16]);
    value /= 16;
  } while (value != 0);
  while (digits.size() < 4) {
    digits.insert(digits.begin(), '0');
  }
  return "U+" + digits;
}

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_quote(char c) { return c == '\'' || c == '"'; }
char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool is_radix_digit(char c, char radix) {
  switch (radix) {
    case 'x':
      return is_digit(c) || (to_lower(c) >= 'a' && to_lower(c) <= 'f');
    case 'o':
      return c >= '0' && c <= '7';
    default:
      return c == '0' || c == '1';
  }
}

std::string_view radix_name(char radix) {
  switch (radix) {
    case 'x':
      return "hexadecimal";
    case 'o':
      return "octal";
    default:
      return "binary";
  }
}

bool is_string_prefix(std::string_view word) {
  if (word.size() > 2) {
    return false;
  }
  std::string lower;
  for (const char c : word) {
    lower.push_back(to_lower(c));
  }
  return lower == "r" || lower == "u" || lower == "b" || lower == "f" || lower == "br" || lower == "rb" ||
         lower == "fr" || lower == "rf";
}

// Python reads source with universal newlines: \r\n and lone \r both become \n.
std::string normalize_source(std::string_view source) {
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (source.starts_with(kByteOrderMark)) {
    source.remove_prefix(kByteOrderMark.size());
  }
  if (source.find('\r') == std::string_view::npos) {
    return std::string(source);  // the usual case: one copy, no per-character loop
  }
  std::string text;
  text.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] != '\r') {
      text.push_back(source[i]);
      continue;
    }
    text.push_back('\n');
    if (i + 1 < source.size() && source[i + 1] == '\n') {
      ++i;
    }
  }
  return text;
}

// Inputs of billions of lines must not overflow a location.
int saturating_increment(int value) { return value < std::numeric_limits<int>::max() ? value + 1 : value; }

// Read position with line/column bookkeeping. peek() past the end yields '\0', which cannot occur
// inside the text because null bytes are rejected before lexing.
class Cursor {
 public:
  Cursor(std::string_view text, SourceLocation start)
      : text_(text), line_(start.line), column_(start.column) {}

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const {
    return ahead < text_.size() - std::min(pos_, text_.size()) ? text_[pos_ + ahead] : '\0';
  }
  std::size_t offset() const { return pos_; }
  SourceLocation location() const { return {line_, column_}; }
  std::string_view text() const { return text_; }
  std::string_view slice_from(std::size_t start) const { return text_.substr(start, pos_ - start); }
  std::string_view rest() const { return text_.substr(pos_); }

  void advance() {
    if (at_end()) {
      return;
    }
    const char c = text_[pos_++];
    if (c == '\n') {
      line_ = saturating_increment(line_);
      column_ = 1;
    } else if (!is_continuation_byte(c)) {
      column_ = saturating_increment(column_);
    }
  }
  void advance(std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      advance();
    }
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_;
  int column_;
};

// Rejects null bytes and malformed UTF-8 up front so the lexer can rely on well-formed text.
// ASCII bytes are checked without decoding; the location is only worked out for an error.
void validate_encoding(std::string_view text, SourceLocation start) {
  const auto location_of = [&](std::size_t offset) {
    Cursor cursor(text, start);
    cursor.advance(offset);
    return cursor.location();
  };
  std::size_t offset = 0;
  while (offset < text.size()) {
    const auto byte = static_cast<unsigned char>(text[offset]);
    if (byte == 0) {
      throw LexFailure("source code cannot contain null bytes", location_of(offset));
    }
    if (byte < 0x80) {
      ++offset;
      continue;
    }
    const auto code_point = decode_utf8(text, offset);
    if (!code_point) {
      throw LexFailure("invalid UTF-8 byte 0x" + hex_code(byte_at(text, offset)).substr(4),
                       location_of(offset));
    }
    offset += code_point->length;
  }
}

struct OpenBracket {
  char symbol;
  SourceLocation location;
};

char matching_opener(char closer) {
  switch (closer) {
    case ')':
      return '(';
    case ']':
      return '[';
    default:
      return '{';
  }
}

// Pushes/pops `stack` for a bracket operator token; reports unmatched and mismatched closers.
void track_bracket(const Token& token, std::vector<OpenBracket>& stack, std::string_view error_prefix) {
  if (token.kind != TokenKind::op || token.text.size() != 1) {
    return;
  }
  const char symbol = token.text[0];
  if (symbol == '(' || symbol == '[' || symbol == '{') {
    if (stack.size() >= static_cast<std::size_t>(kMaxBracketDepth)) {
      throw LexFailure(std::string(error_prefix) + "too many nested parentheses", token.location);
    }
    stack.push_back({symbol, token.location});
    return;
  }
  if (symbol != ')' && symbol != ']' && symbol != '}') {
    return;
  }
  if (stack.empty()) {
    throw LexFailure(std::string(error_prefix) + "unmatched '" + symbol + "'", token.location);
  }
  const OpenBracket open = stack.back();
  if (open.symbol != matching_opener(symbol)) {
    std::string message = std::string(error_prefix) + "closing parenthesis '" + symbol +
                          "' does not match opening parenthesis '" + open.symbol + "'";
    if (open.location.line != token.location.line) {
      message += " on line " + std::to_string(open.location.line);
    }
    throw LexFailure(message, token.location);
  }
  stack.pop_back();
}

// Increments a nesting counter for the lifetime of a scope and fails past the limit, bounding the
// recursion f-string -> replacement field -> nested string.
class NestingGuard : public detail::ScopedNesting<LexFailure> {
 public:
  NestingGuard(int& depth, SourceLocation location)
      : ScopedNesting(depth, kMaxFStringNesting, "f-string: expressions nested too deeply", location) {}
};

class Lexer {
 public:
  Lexer(std::string_view text, const TokenizeOptions& options)
      : cursor_(text, options.start), inside_brackets_mode_(options.inside_brackets) {}

  void run() {
    bool at_line_start = !inside_brackets_mode_;
    while (true) {
      if (at_line_start) {
        at_line_start = false;
        if (!process_indentation()) {
          break;
        }
      }
      skip_inline_whitespace();
      if (cursor_.at_end()) {
        break;
      }
      const char c = cursor_.peek();
      if (c == '#') {
        read_comment();
      } else if (c == '\\') {
        read_line_continuation();
      } else if (c == '\n') {
        at_line_start = end_physical_line();
      } else {
        Token token = lex_token();
        track_bracket(token, brackets_, "");
        emit(std::move(token));
      }
    }
    finish();
  }

  std::vector<Token> take_tokens() { return std::move(tokens_); }
  std::vector<Comment> take_comments() { return std::move(comments_); }

 private:
  struct IndentLevel {
    int width;      // tabs to multiples of 8
    int alt_width;  // tabs as one column; must order the same way, else tabs/spaces are mixed
  };

  void emit(Token token) {
    if (token.kind != TokenKind::newline && token.kind != TokenKind::indent &&
        token.kind != TokenKind::dedent) {
      line_has_tokens_ = true;
    }
    tokens_.push_back(std::move(token));
  }

  void emit_marker(TokenKind kind, SourceLocation location, std::string text = {}) {
    Token token;
    token.kind = kind;
    token.text = std::move(text);
    token.location = location;
    token.end = cursor_.location();
    tokens_.push_back(std::move(token));
  }

  void skip_inline_whitespace() {
    while (cursor_.peek() == ' ' || cursor_.peek() == '\t' || cursor_.peek() == '\f' ||
           (inside_brackets_mode_ && cursor_.peek() == '\n')) {
      cursor_.advance();
    }
  }

  void read_comment() {
    const std::size_t start = cursor_.offset();
    const SourceLocation location = cursor_.location();
    while (!cursor_.at_end() && cursor_.peek() != '\n') {
      cursor_.advance();
    }
    comments_.push_back({std::string(cursor_.slice_from(start)), location});
  }

  void read_line_continuation() {
    const SourceLocation location = cursor_.location();
    cursor_.advance();
    if (cursor_.at_end()) {
      throw LexFailure("unexpected end of file after line continuation character", location);
    }
    if (cursor_.peek() != '\n') {
      throw LexFailure("unexpected character after line continuation character", location);
    }
    cursor_.advance();
  }

  // Consumes a newline; returns true when it ends a logical line (so indentation is read next).
  bool end_physical_line() {
    const SourceLocation location = cursor_.location();
    cursor_.advance();
    if (!brackets_.empty()) {
      return false;
    }
    if (line_has_tokens_) {
      emit_marker(TokenKind::newline, location, "\n");
      line_has_tokens_ = false;
    }
    return true;
  }

  // Measures the indentation of the next non-blank line and emits INDENT/DEDENT tokens. Blank and
  // comment-only lines are skipped. Returns false at end of input.
  bool process_indentation() {
    while (true) {
      const std::size_t start = cursor_.offset();
      const SourceLocation line_start = cursor_.location();
      IndentLevel level{0, 0};
      measure_indentation(level, line_start);
      if (cursor_.at_end()) {
        return false;
      }
      if (cursor_.peek() == '#') {
        read_comment();
      }
      if (cursor_.peek() == '\n') {
        cursor_.advance();
        continue;
      }
      if (cursor_.at_end()) {
        return false;
      }
      apply_indentation(level, line_start, cursor_.slice_from(start));
      return true;
    }
  }

  void measure_indentation(IndentLevel& level, SourceLocation line_start) {
    while (true) {
      const char c = cursor_.peek();
      if (c == ' ') {
        ++level.width;
        ++level.alt_width;
      } else if (c == '\t') {
        level.width = (level.width / 8 + 1) * 8;
        ++level.alt_width;
      } else if (c == '\f') {
        level = {0, 0};
      } else {
        return;
      }
      if (level.width > kMaxIndentWidth) {
        throw LexFailure("indentation is too wide", line_start);
      }
      cursor_.advance();
    }
  }

  void apply_indentation(IndentLevel level, SourceLocation line_start, std::string_view indentation) {
    const SourceLocation location = cursor_.location();
    const IndentLevel top = indents_.back();
    if (level.width == top.width) {
      check_consistent(level.alt_width == top.alt_width, location);
      return;
    }
    if (level.width > top.width) {
      check_consistent(level.alt_width > top.alt_width, location);
      if (indents_.size() > static_cast<std::size_t>(kMaxIndentLevels)) {
        throw LexFailure("too many levels of indentation", location);
      }
      indents_.push_back(level);
      emit_marker(TokenKind::indent, line_start, std::string(indentation));
      return;
    }
    while (indents_.size() > 1 && level.width < indents_.back().width) {
      indents_.pop_back();
      emit_marker(TokenKind::dedent, location);
    }
    if (level.width != indents_.back().width) {
      throw LexFailure("unindent does not match any outer indentation level", location);
    }
    check_consistent(level.alt_width == indents_.back().alt_width, location);
  }

  static void check_consistent(bool consistent, SourceLocation location) {
    if (!consistent) {
      throw LexFailure("inconsistent use of tabs and spaces in indentation", location);
    }
  }

  void finish() {
    if (!brackets_.empty()) {
      const OpenBracket& open = brackets_.back();
      throw LexFailure(std::string("'") + open.symbol + "' was never closed", open.location);
    }
    if (!inside_brackets_mode_) {
      if (line_has_tokens_) {
        emit_marker(TokenKind::newline, cursor_.location());
      }
      while (indents_.size() > 1) {
        indents_.pop_back();
        emit_marker(TokenKind::dedent, cursor_.location());
      }
    }
    emit_marker(TokenKind::end_of_input, cursor_.location());
  }

  // Byte length of the identifier character at the cursor, 0 if there is none there.
  std::size_t identifier_char_length(bool allow_digit) const {
    const char c = cursor_.peek();
    if (is_ascii_letter(c) || c == '_' || (allow_digit && is_digit(c))) {
      return 1;
    }
    if (static_cast<unsigned char>(c) < 0x80U) {
      return 0;
    }
    const auto code_point = decode_utf8(cursor_.text(), cursor_.offset());
    return code_point && is_identifier_code_point(code_point->value) ? code_point->length : 0;
  }

  void read_identifier() {
    while (true) {
      const std::size_t length = identifier_char_length(true);
      if (length == 0) {
        return;
      }
      cursor_.advance(length);
    }
  }

  Token lex_token() {
    Token token;
    token.location = cursor_.location();
    const std::size_t start = cursor_.offset();
    const char c = cursor_.peek();
    if (identifier_char_length(false) > 0) {
      read_identifier();
      const std::string_view word = cursor_.slice_from(start);
      if (is_quote(cursor_.peek()) && is_string_prefix(word)) {
        lex_string(word, token);
      } else {
        token.kind = is_python_keyword(word) ? TokenKind::keyword : TokenKind::name;
      }
    } else if (is_digit(c) || (c == '.' && is_digit(cursor_.peek(1)))) {
      lex_number(token.location);
      token.kind = TokenKind::number;
    } else if (is_quote(c)) {
      lex_string({}, token);
    } else {
      lex_operator();
      token.kind = TokenKind::op;
    }
    token.text = std::string(cursor_.slice_from(start));
    if (token.kind == TokenKind::name && has_non_ascii(token.text)) {
      token.text = nfkc(token.text);  // Python compares identifiers in NFKC: `ｔｏｒｃｈ` is `torch`
    }
    token.end = cursor_.location();
    return token;
  }

  void lex_operator() {
    const std::string_view rest = cursor_.rest();
    // Comparing first characters before whole operators: most operators are one character.
    const auto starts_rest = [rest](std::string_view op) {
      return !rest.empty() && rest.front() == op.front() && rest.starts_with(op);
    };
    for (const std::string_view op : kThreeCharOperators) {
      if (starts_rest(op)) {
        cursor_.advance(op.size());
        return;
      }
    }
    for (const std::string_view op : kTwoCharOperators) {
      if (starts_rest(op)) {
        cursor_.advance(op.size());
        return;
      }
    }
    if (kOneCharOperators.find(cursor_.peek()) != std::string_view::npos) {
      cursor_.advance();
      return;
    }
    throw_invalid_character();
  }

  [[noreturn]] void throw_invalid_character() const {
    const auto code_point = decode_utf8(cursor_.text(), cursor_.offset());
    const char32_t value = code_point ? code_point->value : 0;
    if (is_non_printable(value)) {
      throw LexFailure("invalid non-printable character " + hex_code(value), cursor_.location());
    }
    const std::size_t length = code_point ? code_point->length : 1;
    throw LexFailure(
        "invalid character '" + std::string(cursor_.rest().substr(0, length)) + "' (" + hex_code(value) + ")",
        cursor_.location());
  }

  void lex_number(SourceLocation location) {
    const char next = to_lower(cursor_.peek(1));
    if (cursor_.peek() == '0' && (next == 'x' || next == 'o' || next == 'b')) {
      lex_radix_integer(next, location);
    } else {
      lex_decimal_number(location);
    }
    reject_identifier_after_number(location);
  }

  void lex_radix_integer(char radix, SourceLocation location) {
    const std::string message = "invalid " + std::string(radix_name(radix)) + " literal";
    cursor_.advance(2);
    bool has_digits = false;
    while (true) {
      if (cursor_.peek() == '_') {
        cursor_.advance();
        if (!is_radix_digit(cursor_.peek(), radix)) {
          throw LexFailure(message, location);
        }
      }
      if (!is_radix_digit(cursor_.peek(), radix)) {
        break;
      }
      cursor_.advance();
      has_digits = true;
    }
    if (!has_digits) {
      throw LexFailure(message, location);
    }
    if (is_digit(cursor_.peek())) {
      throw LexFailure(std::string("invalid digit '") + cursor_.peek() + "' in " +
                           std::string(radix_name(radix)) + " literal",
                       cursor_.location());
    }
  }

  void lex_decimal_number(SourceLocation location) {
    const std::size_t start = cursor_.offset();
    bool is_integer = true;
    if (cursor_.peek() != '.') {
      read_digit_part(location);
    }
    const std::string_view integer_part = cursor_.slice_from(start);
    if (cursor_.peek() == '.') {
      cursor_.advance();
      is_integer = false;
      if (is_digit(cursor_.peek())) {
        read_digit_part(location);
      }
    }
    const char after_e = cursor_.peek(1);
    if (to_lower(cursor_.peek()) == 'e' &&
        (is_digit(after_e) || ((after_e == '+' || after_e == '-') && is_digit(cursor_.peek(2))))) {
      cursor_.advance(is_digit(after_e) ? 1 : 2);
      read_digit_part(location);
      is_integer = false;
    }
    if (to_lower(cursor_.peek()) == 'j') {
      cursor_.advance();
      is_integer = false;
    }
    const bool has_nonzero = integer_part.find_first_not_of("0_") != std::string_view::npos;
    if (is_integer && integer_part.size() > 1 && integer_part[0] == '0' && has_nonzero) {
      throw LexFailure(
          "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal "
          "integers",
          location);
    }
  }

  // digit (["_"] digit)*
  void read_digit_part(SourceLocation location) {
    while (true) {
      if (is_digit(cursor_.peek())) {
        cursor_.advance();
      } else if (cursor_.peek() == '_' && is_digit(cursor_.peek(1))) {
        cursor_.advance(2);
      } else if (cursor_.peek() == '_') {
        throw LexFailure("invalid decimal literal", location);
      } else {
        return;
      }
    }
  }

  void reject_identifier_after_number(SourceLocation location) const {
    if (identifier_char_length(true) == 0) {
      return;
    }
    const std::string_view rest = cursor_.rest();
    const bool glued_keyword =
        std::any_of(kKeywordsAllowedAfterNumber.begin(), kKeywordsAllowedAfterNumber.end(),
                    [rest](std::string_view keyword) { return rest.starts_with(keyword); });
    if (!glued_keyword) {
      throw LexFailure("invalid decimal literal", location);
    }
  }

  bool at_closing_quote(char quote, bool triple) const {
    return cursor_.peek() == quote && (!triple || (cursor_.peek(1) == quote && cursor_.peek(2) == quote));
  }

  [[noreturn]] void throw_unterminated(std::string_view what, bool triple, SourceLocation start) const {
    const std::string kind = triple ? "unterminated triple-quoted " : "unterminated ";
    throw LexFailure(kind + std::string(what) + " literal (detected at line " +
                         std::to_string(cursor_.location().line) + ")",
                     start);
  }

  void lex_string(std::string_view prefix, Token& token) {
    token.kind = TokenKind::string;
    bool raw = false;
    bool bytes = false;
    bool formatted = false;
    for (const char c : prefix) {
      raw = raw || to_lower(c) == 'r';
      bytes = bytes || to_lower(c) == 'b';
      formatted = formatted || to_lower(c) == 'f';
    }
    const char quote = cursor_.peek();
    const bool triple = cursor_.peek(1) == quote && cursor_.peek(2) == quote;
    cursor_.advance(triple ? 3 : 1);
    if (formatted) {
      lex_fstring_body(quote, triple, raw, token);
    } else {
      lex_plain_string_body(quote, triple, bytes, token.location);
    }
  }

  void lex_plain_string_body(char quote, bool triple, bool bytes, SourceLocation start) {
    while (true) {
      if (cursor_.at_end()) {
        throw_unterminated("string", triple, start);
      }
      if (at_closing_quote(quote, triple)) {
        cursor_.advance(triple ? 3 : 1);
        return;
      }
      const char c = cursor_.peek();
      if (c == '\n' && !triple) {
        throw_unterminated("string", triple, start);
      }
      if (bytes && static_cast<unsigned char>(c) >= 0x80U) {
        throw LexFailure("bytes can only contain ASCII literal characters", cursor_.location());
      }
      cursor_.advance();
      if (c == '\\') {
        cursor_.advance();  // the escaped character, which may be a quote or a newline
      }
    }
  }

  void lex_fstring_body(char quote, bool triple, bool raw, Token& token) {
    const NestingGuard guard(fstring_depth_, token.location);
    while (true) {
      if (cursor_.at_end()) {
        throw_unterminated("f-string", triple, token.location);
      }
      if (at_closing_quote(quote, triple)) {
        cursor_.advance(triple ? 3 : 1);
        return;
      }
      const char c = cursor_.peek();
      if (c == '\n' && !triple) {
        throw_unterminated("f-string", triple, token.location);
      }
      if (c == '\\') {
        skip_fstring_escape(raw);
      } else if ((c == '{' || c == '}') && cursor_.peek(1) == c) {
        cursor_.advance(2);  // {{ and }} are literal braces
      } else if (c == '{') {
        cursor_.advance();
        lex_replacement_field(quote, triple, token);
      } else if (c == '}') {
        throw LexFailure("f-string: single '}' is not allowed", cursor_.location());
      } else {
        cursor_.advance();
      }
    }
  }

  // A backslash in an f-string literal part; a brace after it still opens or closes a field.
  void skip_fstring_escape(bool raw) {
    cursor_.advance();
    const char next = cursor_.peek();
    if (cursor_.at_end() || next == '{' || next == '}') {
      return;
    }
    if (!raw && next == 'N' && cursor_.peek(1) == '{') {
      cursor_.advance(2);
      while (!cursor_.at_end() && cursor_.peek() != '}' && cursor_.peek() != '\n' &&
             !is_quote(cursor_.peek())) {
        cursor_.advance();
      }
      if (cursor_.peek() == '}') {
        cursor_.advance();
      }
      return;
    }
    cursor_.advance();
  }

  void skip_field_whitespace() {
    while (true) {
      const char c = cursor_.peek();
      if (c == ' ' || c == '\t' || c == '\f' || c == '\n') {
        cursor_.advance();
      } else if (c == '#') {
        read_comment();
      } else if (c == '\\' && cursor_.peek(1) == '\n') {
        cursor_.advance(2);
      } else {
        return;
      }
    }
  }

  bool at_field_terminator() const {
    const char c = cursor_.peek();
    const char next = cursor_.peek(1);
    return c == '}' || c == ':' || (c == '!' && next != '=') || (c == '=' && next != '=');
  }

  // After the opening '{': the expression, then optional '=', '!conversion' and ':format spec',
  // then the closing '}'.
  void lex_replacement_field(char quote, bool triple, Token& token) {
    const NestingGuard guard(fstring_depth_, cursor_.location());
    skip_field_whitespace();
    const std::size_t start = cursor_.offset();
    const SourceLocation location = cursor_.location();
    std::vector<OpenBracket> brackets;
    std::size_t end = start;
    while (true) {
      if (cursor_.at_end()) {
        throw LexFailure("f-string: expecting '}'", location);
      }
      if (brackets.empty() && at_field_terminator()) {
        break;
      }
      const Token inner = lex_token();
      track_bracket(inner, brackets, "f-string: ");
      end = cursor_.offset();
      skip_field_whitespace();
    }
    if (end == start) {
      throw LexFailure(std::string("f-string: valid expression required before '") + cursor_.peek() + "'",
                       cursor_.location());
    }
    token.fstring_fields.push_back({std::string(cursor_.text().substr(start, end - start)), location});
    finish_replacement_field(quote, triple, token);
  }

  void finish_replacement_field(char quote, bool triple, Token& token) {
    if (cursor_.peek() == '=') {
      cursor_.advance();
      skip_field_whitespace();
    }
    if (cursor_.peek() == '!') {
      cursor_.advance();
      const SourceLocation conversion_location = cursor_.location();
      const std::size_t conversion_start = cursor_.offset();
      read_identifier();
      const std::string_view conversion = cursor_.slice_from(conversion_start);
      if (conversion.empty()) {
        throw LexFailure("f-string: missing conversion character", conversion_location);
      }
      if (conversion != "s" && conversion != "r" && conversion != "a") {
        throw LexFailure("f-string: invalid conversion character: expected 's', 'r', or 'a'",
                         conversion_location);
      }
      skip_field_whitespace();
    }
    if (cursor_.peek() == ':') {
      cursor_.advance();
      lex_format_spec(quote, triple, token);
      return;
    }
    if (cursor_.peek() != '}') {
      throw LexFailure("f-string: expecting '}'", cursor_.location());
    }
    cursor_.advance();
  }

  // Literal text with nested replacement fields, up to and including the field's closing '}'.
  void lex_format_spec(char quote, bool triple, Token& token) {
    while (true) {
      if (cursor_.at_end() || at_closing_quote(quote, triple)) {
        throw LexFailure("f-string: expecting '}'", cursor_.location());
      }
      const char c = cursor_.peek();
      if (c == '\n' && !triple) {
        throw LexFailure(
            "f-string: newlines are not allowed in format specifiers for single quoted f-strings",
            cursor_.location());
      }
      cursor_.advance();
      if (c == '}') {
        return;
      }
      if (c == '{') {
        lex_replacement_field(quote, triple, token);
      } else if (c == '\\' && cursor_.peek() != '{' && cursor_.peek() != '}') {
        cursor_.advance();
      }
    }
  }

  Cursor cursor_;
  bool inside_brackets_mode_;
  bool line_has_tokens_ = false;
  int fstring_depth_ = 0;
  std::vector<IndentLevel> indents_{{0, 0}};
  std::vector<OpenBracket> brackets_;
  std::vector<Token> tokens_;
  std::vector<Comment> comments_;
};

}  // namespace

bool is_python_keyword(std::string_view word) {
  // Every name token asks this: the shape test answers most of them.
  if (word.empty() || word.size() > 8 || static_cast<unsigned char>(word.front()) >= kKeywordShapes.size() ||
      (kKeywordShapes.at(static_cast<unsigned char>(word.front())) & (1U << word.size())) == 0) {
    return false;
  }
  return std::any_of(kKeywords.begin(), kKeywords.end(), [word](std::string_view keyword) {
    return keyword.front() == word.front() && keyword == word;
  });
}

std::string_view to_string(TokenKind kind) {
  switch (kind) {
    case TokenKind::name:
      return "NAME";
    case TokenKind::keyword:
      return "KEYWORD";
    case TokenKind::number:
      return "NUMBER";
    case TokenKind::string:
      return "STRING";
    case TokenKind::op:
      return "OP";
    case TokenKind::newline:
      return "NEWLINE";
    case TokenKind::indent:
      return "INDENT";
    case TokenKind::dedent:
      return "DEDENT";
    case TokenKind::end_of_input:
      return "ENDMARKER";
  }
  return "UNKNOWN";
}

TokenizeResult tokenize(std::string_view source, const TokenizeOptions& options) {
  TokenizeResult result;
  const std::string text = normalize_source(source);
  Lexer lexer(text, options);
  try {
    validate_encoding(text, options.start);
    lexer.run();
  } catch (const LexFailure& failure) {
    result.error = TokenizeError{failure.message(), failure.location()};
  }
  result.tokens = lexer.take_tokens();
  result.comments = lexer.take_comments();
  return result;
}

}  // namespace kforge::source
