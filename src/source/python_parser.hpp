#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "source/python_ast.hpp"
#include "source/python_tokenizer.hpp"
#include "source/source_location.hpp"

namespace kforge::source {

struct SyntaxError {
  std::string message;
  SourceLocation location;
};

struct ParseResult {
  std::unique_ptr<Module> module;  // null exactly when `error` is set
  std::vector<Comment> comments;
  std::optional<SyntaxError> error;

  bool ok() const { return !error.has_value(); }
};

// Recursion depth of the parser (nested brackets, unary operators, lambdas, blocks, f-strings)
// past which input is rejected with "nesting too deep" instead of risking the stack.
inline constexpr int kMaxParseNesting = 200;
// Height past which a syntax tree is rejected (long left-nested chains such as a+a+...+a).
inline constexpr int kMaxTreeHeight = 1000;

// Parses a whole module (Python 3.12 grammar). Lexical and syntax errors are reported in the
// result; it only throws std::bad_alloc.
ParseResult parse_module(std::string_view source);

// Decoded value of one non-f string literal token (prefix and quotes included in `literal`):
// processes escapes unless raw. Unknown escapes are kept verbatim, as Python does.
std::string decode_string_literal(std::string_view literal);

}  // namespace kforge::source
