#include "source/python_parser.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <exception>
#include <initializer_list>
#include <span>
#include <utility>

#include "source/located_failure.hpp"

namespace kforge::source {
namespace {

// Internal error carrier: thrown where parsing fails, turned into SyntaxError by parse_module().
class ParseFailure : public detail::LocatedFailure {
 public:
  using LocatedFailure::LocatedFailure;
};

// Counts recursion for the lifetime of a scope and fails past kMaxParseNesting.
class DepthGuard : public detail::ScopedNesting<ParseFailure> {
 public:
  DepthGuard(int& depth, SourceLocation location)
      : ScopedNesting(depth, kMaxParseNesting, "nesting too deep", location) {}
};

template <class T>
std::unique_ptr<T> make(SourceLocation location) {
  return std::make_unique<T>(location);
}

// Records a finished node's height (from its already sealed children) and enforces
// kMaxTreeHeight. Every node the parser builds goes through here.
template <class T>
std::unique_ptr<T> seal(std::unique_ptr<T> node) {
  int child_height = 0;
  node->for_each_child(
      [&child_height](const Node& child) { child_height = std::max(child_height, child.height); });
  node->height = child_height + 1;
  if (node->height > kMaxTreeHeight) {
    throw ParseFailure("nesting too deep", node->location);
  }
  return node;
}

struct OperatorSpelling {
  std::string_view text;
  BinaryOperator op;
};

constexpr std::array<OperatorSpelling, 13> kAugmentedAssignments = {{
    {"+=", BinaryOperator::add},
    {"-=", BinaryOperator::sub},
    {"*=", BinaryOperator::mul},
    {"@=", BinaryOperator::matmul},
    {"/=", BinaryOperator::div},
    {"//=", BinaryOperator::floor_div},
    {"%=", BinaryOperator::mod},
    {"**=", BinaryOperator::pow},
    {"<<=", BinaryOperator::lshift},
    {">>=", BinaryOperator::rshift},
    {"|=", BinaryOperator::bit_or},
    {"^=", BinaryOperator::bit_xor},
    {"&=", BinaryOperator::bit_and},
}};

constexpr std::array<std::string_view, 8> kExpressionStartOperators = {"(", "[", "{",   "-",
                                                                       "+", "~", "...", "*"};
constexpr std::array<std::string_view, 6> kExpressionStartKeywords = {"None", "True",   "False",
                                                                      "not",  "lambda", "await"};

bool starts_expression(const Token& token) {
  switch (token.kind) {
    case TokenKind::name:
    case TokenKind::number:
    case TokenKind::string:
      return true;
    case TokenKind::keyword:
      return std::find(kExpressionStartKeywords.begin(), kExpressionStartKeywords.end(), token.text) !=
             kExpressionStartKeywords.end();
    case TokenKind::op:
      return std::find(kExpressionStartOperators.begin(), kExpressionStartOperators.end(), token.text) !=
             kExpressionStartOperators.end();
    default:
      return false;
  }
}

bool starts_target(const Token& token) {
  return token.kind == TokenKind::name || token.is_op("(") || token.is_op("[") || token.is_op("*");
}

// What an expression is called in "cannot assign to ..." messages.
std::string_view describe_for_assignment(const Expr& expr) {
  switch (expr.kind()) {
    case NodeKind::call:
      return "function call";
    case NodeKind::constant:
    case NodeKind::string:
      return "literal";
    case NodeKind::compare:
      return "comparison";
    case NodeKind::lambda:
      return "lambda";
    case NodeKind::named_expr:
      return "named expression";
    case NodeKind::if_exp:
      return "conditional expression";
    case NodeKind::await_expr:
      return "await expression";
    case NodeKind::yield_expr:
    case NodeKind::yield_from:
      return "yield expression";
    case NodeKind::list_comp:
    case NodeKind::set_comp:
    case NodeKind::dict_comp:
    case NodeKind::generator_exp:
      return "comprehension";
    case NodeKind::dict:
      return "dict literal";
    case NodeKind::set:
      return "set display";
    default:
      return "expression";
  }
}

struct StringPrefix {
  bool raw = false;
  bool bytes = false;
  bool formatted = false;
};

StringPrefix string_prefix_of(std::string_view literal) {
  StringPrefix prefix;
  for (const char c : literal) {
    if (c == '\'' || c == '"') {
      break;
    }
    prefix.raw = prefix.raw || c == 'r' || c == 'R';
    prefix.bytes = prefix.bytes || c == 'b' || c == 'B';
    prefix.formatted = prefix.formatted || c == 'f' || c == 'F';
  }
  return prefix;
}

void append_utf8(std::string& out, char32_t code_point) {
  const auto byte = [](char32_t value) { return static_cast<char>(static_cast<unsigned char>(value)); };
  if (code_point < 0x80) {
    out.push_back(byte(code_point));
  } else if (code_point < 0x800) {
    out.push_back(byte(0xC0U | (code_point >> 6U)));
    out.push_back(byte(0x80U | (code_point & 0x3FU)));
  } else if (code_point < 0x10000) {
    out.push_back(byte(0xE0U | (code_point >> 12U)));
    out.push_back(byte(0x80U | ((code_point >> 6U) & 0x3FU)));
    out.push_back(byte(0x80U | (code_point & 0x3FU)));
  } else {
    out.push_back(byte(0xF0U | ((code_point >> 18U) & 0x07U)));
    out.push_back(byte(0x80U | ((code_point >> 12U) & 0x3FU)));
    out.push_back(byte(0x80U | ((code_point >> 6U) & 0x3FU)));
    out.push_back(byte(0x80U | (code_point & 0x3FU)));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

// Reads up to `max_digits` digits of `base` from content[pos...]; returns the digit count.
std::size_t read_code(std::string_view content, std::size_t pos, std::size_t max_digits, int base,
                      char32_t& value) {
  std::size_t count = 0;
  value = 0;
  while (count < max_digits && pos + count < content.size()) {
    const int digit = hex_value(content[pos + count]);
    if (digit < 0 || digit >= base) {
      break;
    }
    value = value * static_cast<char32_t>(base) + static_cast<char32_t>(digit);
    ++count;
  }
  return count;
}

char simple_escape(char c) {
  switch (c) {
    case 'a':
      return '\a';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'v':
      return '\v';
    case '\\':
    case '\'':
    case '"':
      return c;
    default:
      return '\0';
  }
}

struct DecodedString {
  std::string value;
  std::string error;  // empty when the literal is well formed
};

// \x, \u and \U escapes with exactly `digits` hex digits; returns the code or an error.
std::size_t decode_hex_escape(std::string_view content, std::size_t pos, std::size_t digits, bool bytes,
                              DecodedString& out) {
  char32_t value = 0;
  if (read_code(content, pos + 1, digits, 16, value) != digits) {
    out.error = "truncated \\" + std::string(1, content[pos]) + std::string(digits, 'X') + " escape";
    return 1;
  }
  if (value > 0x10FFFF) {
    out.error = "illegal Unicode character";
    return 1;
  }
  if (bytes) {
    out.value.push_back(static_cast<char>(static_cast<unsigned char>(value & 0xFFU)));
  } else {
    append_utf8(out.value, value);
  }
  return 1 + digits;
}

// \N{NAME}: the name is kept verbatim since no Unicode name table is bundled.
std::size_t decode_named_escape(std::string_view content, std::size_t pos, DecodedString& out) {
  const std::size_t close = content.find('}', pos);
  if (pos + 1 >= content.size() || content[pos + 1] != '{' || close == std::string_view::npos ||
      close == pos + 2) {
    out.error = "malformed \\N character escape";
    return 1;
  }
  out.value += "\\";
  out.value += content.substr(pos, close + 1 - pos);
  return close + 1 - pos;
}

// Decodes the escape starting after a backslash at content[pos]; returns the characters consumed.
std::size_t decode_escape(std::string_view content, std::size_t pos, bool bytes, DecodedString& out) {
  const char c = content[pos];
  if (c == '\n') {
    return 1;  // backslash-newline continues the literal
  }
  if (const char simple = simple_escape(c); simple != '\0') {
    out.value.push_back(simple);
    return 1;
  }
  if (c >= '0' && c <= '7') {
    char32_t value = 0;
    const std::size_t digits = read_code(content, pos, 3, 8, value);
    if (bytes) {
      out.value.push_back(static_cast<char>(static_cast<unsigned char>(value & 0xFFU)));
    } else {
      append_utf8(out.value, value);
    }
    return digits;
  }
  if (c == 'x') {
    return decode_hex_escape(content, pos, 2, bytes, out);
  }
  if (!bytes && (c == 'u' || c == 'U')) {
    return decode_hex_escape(content, pos, c == 'u' ? 4 : 8, bytes, out);
  }
  if (!bytes && c == 'N') {
    return decode_named_escape(content, pos, out);
  }
  out.value.push_back('\\');  // unknown escape: kept verbatim, as Python does
  return 0;
}

DecodedString decode_literal(std::string_view literal) {
  DecodedString decoded;
  const std::size_t quote_start = literal.find_first_of("'\"");
  if (quote_start == std::string_view::npos) {
    return decoded;
  }
  const StringPrefix prefix = string_prefix_of(literal);
  const std::string_view quoted = literal.substr(quote_start);
  const std::size_t quote_length = quoted.size() >= 6 && quoted[0] == quoted[1] && quoted[1] == quoted[2]
                                       ? std::size_t{3}
                                       : std::size_t{1};
  if (quoted.size() < 2 * quote_length) {
    return decoded;
  }
  const std::string_view content = quoted.substr(quote_length, quoted.size() - 2 * quote_length);
  if (prefix.raw) {
    decoded.value = std::string(content);
    return decoded;
  }
  decoded.value.reserve(content.size());
  for (std::size_t i = 0; i < content.size() && decoded.error.empty(); ++i) {
    if (content[i] != '\\' || i + 1 >= content.size()) {
      decoded.value.push_back(content[i]);
      continue;
    }
    i += decode_escape(content, i + 1, prefix.bytes, decoded);
  }
  return decoded;
}

class Parser {
 public:
  Parser(std::span<const Token> tokens, int depth) : tokens_(tokens), depth_(depth) {}

  std::unique_ptr<Module> parse_module() {
    auto module = make<Module>({1, 1});
    while (!at(TokenKind::end_of_input)) {
      parse_statement(module->body);
    }
    return seal(std::move(module));
  }

  // The expression of an f-string replacement field: star expressions or a yield.
  ExprPtr parse_fstring_expression() {
    ExprPtr expr = parse_assignment_value();
    if (!at(TokenKind::end_of_input)) {
      fail("f-string: expecting '}'", current().location);
    }
    return expr;
  }

 private:
  // ------------------------------------------------------------------------------------------
  // Token access

  const Token& peek(std::size_t ahead) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& current() const { return peek(0); }
  const Token& advance() {
    const Token& token = current();
    if (pos_ + 1 < tokens_.size()) {
      ++pos_;
    }
    return token;
  }
  bool at(TokenKind kind) const { return current().kind == kind; }
  bool at_op(std::string_view op) const { return current().is_op(op); }
  bool at_keyword(std::string_view word) const { return current().is_keyword(word); }
  bool accept_op(std::string_view op) {
    if (!at_op(op)) {
      return false;
    }
    advance();
    return true;
  }
  bool accept_keyword(std::string_view word) {
    if (!at_keyword(word)) {
      return false;
    }
    advance();
    return true;
  }
  void expect_op(std::string_view op) {
    if (!accept_op(op)) {
      fail("expected '" + std::string(op) + "'", current().location);
    }
  }
  void expect_keyword(std::string_view word) {
    if (!accept_keyword(word)) {
      fail("expected '" + std::string(word) + "'", current().location);
    }
  }
  std::string expect_name(std::string_view what) {
    if (!at(TokenKind::name)) {
      fail("expected " + std::string(what), current().location);
    }
    return advance().text;
  }
  void expect_newline() {
    if (at(TokenKind::newline)) {
      advance();
    } else if (!at(TokenKind::end_of_input)) {
      fail_invalid_syntax();
    }
  }

  [[noreturn]] static void fail(std::string message, SourceLocation location) {
    throw ParseFailure(std::move(message), location);
  }

  [[noreturn]] void fail_invalid_syntax() const {
    const Token& token = current();
    switch (token.kind) {
      case TokenKind::indent:
        fail("unexpected indent", peek(1).location);
      case TokenKind::newline:
      case TokenKind::end_of_input:
        fail("invalid syntax: unexpected end of line", token.location);
      default:
        fail("invalid syntax", token.location);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Statements

  void parse_statement(StmtList& out) {
    const Token& token = current();
    if (token.kind == TokenKind::indent) {
      fail("unexpected indent", peek(1).location);
    }
    if (StmtPtr compound = parse_compound_statement()) {
      out.push_back(std::move(compound));
      return;
    }
    parse_simple_statements(out);
  }

  StmtPtr parse_compound_statement() {
    const Token& token = current();
    if (token.is_op("@")) {
      return parse_decorated();
    }
    if (token.is_name("match")) {
      return try_parse_match();
    }
    if (token.kind != TokenKind::keyword) {
      return nullptr;
    }
    const SourceLocation location = token.location;
    if (token.text == "if") {
      return parse_if();
    }
    if (token.text == "while") {
      return parse_while();
    }
    if (token.text == "for") {
      return parse_for(false, location);
    }
    if (token.text == "try") {
      return parse_try();
    }
    if (token.text == "with") {
      return parse_with(false, location);
    }
    if (token.text == "def") {
      return parse_function_def({}, false, location);
    }
    if (token.text == "class") {
      return parse_class_def({});
    }
    if (token.text == "async") {
      return parse_async({});
    }
    return nullptr;
  }

  void parse_simple_statements(StmtList& out) {
    while (true) {
      out.push_back(parse_simple_statement());
      if (!accept_op(";") || at(TokenKind::newline)) {
        break;
      }
    }
    expect_newline();
  }

  StmtPtr parse_simple_statement() {
    const Token& token = current();
    const SourceLocation location = token.location;
    if (token.is_keyword("pass")) {
      advance();
      return seal(make<Pass>(location));
    }
    if (token.is_keyword("break")) {
      advance();
      return seal(make<Break>(location));
    }
    if (token.is_keyword("continue")) {
      advance();
      return seal(make<Continue>(location));
    }
    if (token.is_keyword("return")) {
      return parse_return();
    }
    if (token.is_keyword("raise")) {
      return parse_raise();
    }
    if (token.is_keyword("global")) {
      return parse_name_list<Global>();
    }
    if (token.is_keyword("nonlocal")) {
      return parse_name_list<Nonlocal>();
    }
    if (token.is_keyword("del")) {
      return parse_del();
    }
    if (token.is_keyword("assert")) {
      return parse_assert();
    }
    if (token.is_keyword("import")) {
      return parse_import();
    }
    if (token.is_keyword("from")) {
      return parse_import_from();
    }
    if (token.is_name("type") && peek(1).kind == TokenKind::name &&
        (peek(2).is_op("=") || peek(2).is_op("["))) {
      return parse_type_alias();
    }
    return parse_expression_statement();
  }

  StmtPtr parse_return() {
    auto node = make<Return>(advance().location);
    if (starts_expression(current())) {
      node->value = parse_star_expressions();
    }
    return seal(std::move(node));
  }

  StmtPtr parse_raise() {
    auto node = make<Raise>(advance().location);
    if (starts_expression(current())) {
      node->exception = parse_expression();
      if (accept_keyword("from")) {
        node->cause = parse_expression();
      }
    }
    return seal(std::move(node));
  }

  template <class NameListStmt>
  StmtPtr parse_name_list() {
    auto node = make<NameListStmt>(advance().location);
    do {
      node->names.push_back(expect_name("a name"));
    } while (accept_op(","));
    return seal(std::move(node));
  }

  StmtPtr parse_del() {
    auto node = make<Delete>(advance().location);
    do {
      if (!starts_target(current())) {
        break;
      }
      ExprPtr target = parse_target();
      check_assignable(*target, "delete");
      node->targets.push_back(std::move(target));
    } while (accept_op(","));
    if (node->targets.empty()) {
      fail_invalid_syntax();
    }
    return seal(std::move(node));
  }

  StmtPtr parse_assert() {
    auto node = make<Assert>(advance().location);
    node->test = parse_expression();
    if (accept_op(",")) {
      node->message = parse_expression();
    }
    return seal(std::move(node));
  }

  std::string parse_dotted_name() {
    std::string name = expect_name("a module name");
    while (accept_op(".")) {
      name += "." + expect_name("a module name");
    }
    return name;
  }

  StmtPtr parse_import() {
    auto node = make<Import>(advance().location);
    do {
      auto alias = make<Alias>(current().location);
      alias->name = parse_dotted_name();
      if (accept_keyword("as")) {
        alias->asname = expect_name("a name after 'as'");
      }
      node->names.push_back(seal(std::move(alias)));
    } while (accept_op(","));
    return seal(std::move(node));
  }

  StmtPtr parse_import_from() {
    auto node = make<ImportFrom>(advance().location);
    while (at_op(".") || at_op("...")) {
      if (node->level > kMaxParseNesting) {
        fail("too many dots in a relative import", current().location);
      }
      node->level += static_cast<int>(advance().text.size());
    }
    if (at(TokenKind::name) || node->level == 0) {
      node->module = parse_dotted_name();
    }
    expect_keyword("import");
    if (at_op("*")) {
      auto alias = make<Alias>(advance().location);
      alias->name = "*";
      node->names.push_back(seal(std::move(alias)));
      return seal(std::move(node));
    }
    const bool parenthesized = accept_op("(");
    do {
      if (parenthesized && at_op(")")) {
        break;
      }
      auto alias = make<Alias>(current().location);
      alias->name = expect_name("a name to import");
      if (accept_keyword("as")) {
        alias->asname = expect_name("a name after 'as'");
      }
      node->names.push_back(seal(std::move(alias)));
    } while (accept_op(","));
    if (parenthesized) {
      expect_op(")");
    }
    if (node->names.empty()) {
      fail_invalid_syntax();
    }
    return seal(std::move(node));
  }

  StmtPtr parse_type_alias() {
    auto node = make<TypeAlias>(advance().location);
    node->name = expect_name("a type alias name");
    if (at_op("[")) {
      node->type_params = parse_type_params();
    }
    expect_op("=");
    node->value = parse_expression();
    return seal(std::move(node));
  }

  ExprPtr parse_assignment_value() {
    return at_keyword("yield") ? parse_yield_expression() : parse_star_expressions();
  }

  StmtPtr parse_expression_statement() {
    const SourceLocation location = current().location;
    ExprPtr first = parse_assignment_value();
    if (at_op(":")) {
      return parse_annotated_assignment(location, std::move(first));
    }
    for (const OperatorSpelling& spelling : kAugmentedAssignments) {
      if (at_op(spelling.text)) {
        return parse_augmented_assignment(location, std::move(first), spelling.op);
      }
    }
    if (at_op("=")) {
      return parse_assignment(location, std::move(first));
    }
    auto node = make<ExprStmt>(location);
    node->value = std::move(first);
    return seal(std::move(node));
  }

  StmtPtr parse_annotated_assignment(SourceLocation location, ExprPtr target) {
    advance();
    const NodeKind kind = target->kind();
    if (kind == NodeKind::tuple || kind == NodeKind::list) {
      fail("only single target (not " + std::string(kind == NodeKind::tuple ? "tuple" : "list") +
               ") can be annotated",
           target->location);
    }
    if (kind != NodeKind::name && kind != NodeKind::attribute && kind != NodeKind::subscript) {
      fail("illegal target for annotation", target->location);
    }
    auto node = make<AnnAssign>(location);
    node->target = std::move(target);
    node->annotation = parse_expression();
    if (accept_op("=")) {
      node->value = parse_assignment_value();
    }
    return seal(std::move(node));
  }

  StmtPtr parse_augmented_assignment(SourceLocation location, ExprPtr target, BinaryOperator op) {
    advance();
    const NodeKind kind = target->kind();
    if (kind != NodeKind::name && kind != NodeKind::attribute && kind != NodeKind::subscript) {
      fail("'" + std::string(to_string(kind)) + "' is an illegal expression for augmented assignment",
           target->location);
    }
    auto node = make<AugAssign>(location);
    node->target = std::move(target);
    node->op = op;
    node->value = parse_assignment_value();
    return seal(std::move(node));
  }

  StmtPtr parse_assignment(SourceLocation location, ExprPtr first) {
    auto node = make<Assign>(location);
    ExprPtr value = std::move(first);
    while (accept_op("=")) {
      check_assignable(*value, "assign to");
      node->targets.push_back(std::move(value));
      value = parse_assignment_value();
    }
    node->value = std::move(value);
    return seal(std::move(node));
  }

  // Assignment, deletion and loop targets: names, attributes, subscripts, and (starred)
  // tuples/lists of those.
  void check_assignable(const Expr& target, std::string_view action) const {
    switch (target.kind()) {
      case NodeKind::name:
      case NodeKind::attribute:
      case NodeKind::subscript:
        return;
      case NodeKind::starred:
        check_assignable(*node_cast<Starred>(target)->value, action);
        return;
      case NodeKind::tuple:
        for (const ExprPtr& element : node_cast<Tuple>(target)->elements) {
          check_assignable(*element, action);
        }
        return;
      case NodeKind::list:
        for (const ExprPtr& element : node_cast<List>(target)->elements) {
          check_assignable(*element, action);
        }
        return;
      default:
        fail("cannot " + std::string(action) + " " + std::string(describe_for_assignment(target)),
             target.location);
    }
  }

  // ':' followed by an indented block or by simple statements on the same line.
  StmtList parse_block(SourceLocation header, std::string_view header_kind) {
    expect_op(":");
    const DepthGuard guard(depth_, current().location);
    StmtList body;
    if (!at(TokenKind::newline)) {
      parse_simple_statements(body);
      return body;
    }
    advance();
    if (!at(TokenKind::indent)) {
      fail("expected an indented block after " + std::string(header_kind) + " on line " +
               std::to_string(header.line),
           current().location);
    }
    advance();
    while (!at(TokenKind::dedent) && !at(TokenKind::end_of_input)) {
      parse_statement(body);
    }
    accept_dedent();
    return body;
  }

  void accept_dedent() {
    if (at(TokenKind::dedent)) {
      advance();
    }
  }

  StmtPtr parse_if() {
    struct Branch {
      SourceLocation location;
      ExprPtr test;
      StmtList body;
    };
    std::vector<Branch> branches;
    do {
      const SourceLocation location = advance().location;
      ExprPtr test = parse_named_expression();
      StmtList body = parse_block(location, branches.empty() ? "'if' statement" : "'elif' statement");
      branches.push_back({location, std::move(test), std::move(body)});
    } while (at_keyword("elif"));
    StmtList tail = parse_else_block("'else' statement");
    // elif chains become nested Ifs, built bottom-up so long chains need no recursion.
    std::for_each(branches.rbegin(), branches.rend(), [&tail](Branch& branch) {
      auto node = make<If>(branch.location);
      node->test = std::move(branch.test);
      node->body = std::move(branch.body);
      node->orelse = std::move(tail);
      tail.clear();
      tail.push_back(seal(std::move(node)));
    });
    return std::move(tail.front());
  }

  StmtList parse_else_block(std::string_view header_kind) {
    if (!at_keyword("else")) {
      return {};
    }
    const SourceLocation location = advance().location;
    return parse_block(location, header_kind);
  }

  StmtPtr parse_while() {
    auto node = make<While>(advance().location);
    node->test = parse_named_expression();
    node->body = parse_block(node->location, "'while' statement");
    node->orelse = parse_else_block("'else' statement");
    return seal(std::move(node));
  }

  StmtPtr parse_for(bool is_async, SourceLocation location) {
    expect_keyword("for");
    auto node = make<For>(location);
    node->is_async = is_async;
    node->target = parse_target_list();
    check_assignable(*node->target, "assign to");
    expect_keyword("in");
    node->iter = parse_star_expressions();
    node->body = parse_block(location, "'for' statement");
    node->orelse = parse_else_block("'else' statement");
    return seal(std::move(node));
  }

  StmtPtr parse_try() {
    auto node = make<Try>(advance().location);
    node->body = parse_block(node->location, "'try' statement");
    while (at_keyword("except")) {
      node->handlers.push_back(parse_except_handler(*node));
    }
    node->orelse = parse_else_block("'else' statement");
    if (at_keyword("finally")) {
      const SourceLocation location = advance().location;
      node->finalbody = parse_block(location, "'finally' statement");
    }
    if (node->handlers.empty() && node->finalbody.empty()) {
      fail("expected 'except' or 'finally' block", current().location);
    }
    return seal(std::move(node));
  }

  std::unique_ptr<ExceptHandler> parse_except_handler(Try& owner) {
    auto handler = make<ExceptHandler>(advance().location);
    if (accept_op("*")) {
      owner.is_star = true;
    }
    if (!at_op(":")) {
      handler->type = parse_expression();
      if (at_op(",")) {
        fail("multiple exception types must be parenthesized", handler->type->location);
      }
      if (accept_keyword("as")) {
        handler->name = expect_name("a name after 'as'");
      }
    }
    handler->body = parse_block(handler->location, "'except' statement");
    return seal(std::move(handler));
  }

  StmtPtr parse_with(bool is_async, SourceLocation location) {
    expect_keyword("with");
    auto node = make<With>(location);
    node->is_async = is_async;
    if (!(at_op("(") && try_parse_parenthesized_with_items(node->items))) {
      do {
        node->items.push_back(parse_with_item());
      } while (accept_op(","));
    }
    node->body = parse_block(location, "'with' statement");
    return seal(std::move(node));
  }

  // `with (a as b, c as d):` — tried first; on failure the parenthesis is an ordinary expression.
  bool try_parse_parenthesized_with_items(std::vector<std::unique_ptr<WithItem>>& items) {
    const std::size_t saved = pos_;
    try {
      advance();
      do {
        if (at_op(")")) {
          break;
        }
        items.push_back(parse_with_item());
      } while (accept_op(","));
      expect_op(")");
      if (!at_op(":") || items.empty()) {
        fail_invalid_syntax();
      }
      return true;
    } catch (const ParseFailure&) {
      pos_ = saved;
      items.clear();
      return false;
    }
  }

  std::unique_ptr<WithItem> parse_with_item() {
    auto item = make<WithItem>(current().location);
    item->context_expr = parse_expression();
    if (accept_keyword("as")) {
      item->optional_vars = parse_target();
      check_assignable(*item->optional_vars, "assign to");
    }
    return seal(std::move(item));
  }

  StmtPtr parse_decorated() {
    ExprList decorators;
    while (accept_op("@")) {
      decorators.push_back(parse_named_expression());
      if (!at(TokenKind::newline)) {
        fail_invalid_syntax();
      }
      advance();
    }
    const SourceLocation location = current().location;
    if (at_keyword("def")) {
      return parse_function_def(std::move(decorators), false, location);
    }
    if (at_keyword("class")) {
      return parse_class_def(std::move(decorators));
    }
    if (at_keyword("async")) {
      return parse_async(std::move(decorators));
    }
    fail("expected a function or class definition after decorators", location);
  }

  StmtPtr parse_async(ExprList decorators) {
    const SourceLocation location = advance().location;
    if (at_keyword("def")) {
      return parse_function_def(std::move(decorators), true, location);
    }
    if (decorators.empty() && at_keyword("for")) {
      return parse_for(true, location);
    }
    if (decorators.empty() && at_keyword("with")) {
      return parse_with(true, location);
    }
    fail("expected 'def', 'for' or 'with' after 'async'", current().location);
  }

  StmtPtr parse_function_def(ExprList decorators, bool is_async, SourceLocation location) {
    expect_keyword("def");
    auto node = make<FunctionDef>(location);
    node->decorators = std::move(decorators);
    node->is_async = is_async;
    node->name = expect_name("a function name");
    if (at_op("[")) {
      node->type_params = parse_type_params();
    }
    expect_op("(");
    node->params = parse_parameters(")", true);
    expect_op(")");
    if (accept_op("->")) {
      node->returns = parse_expression();
    }
    node->body = parse_block(location, "function definition");
    return seal(std::move(node));
  }

  StmtPtr parse_class_def(ExprList decorators) {
    auto node = make<ClassDef>(advance().location);
    node->decorators = std::move(decorators);
    node->name = expect_name("a class name");
    if (at_op("[")) {
      node->type_params = parse_type_params();
    }
    if (accept_op("(")) {
      parse_call_arguments(node->bases, node->keywords, false);
      expect_op(")");
    }
    node->body = parse_block(node->location, "class definition");
    return seal(std::move(node));
  }

  TypeParamList parse_type_params() {
    expect_op("[");
    TypeParamList params;
    do {
      if (at_op("]")) {
        break;
      }
      auto param = make<TypeParam>(current().location);
      if (accept_op("*")) {
        param->param_kind = TypeParamKind::type_var_tuple;
      } else if (accept_op("**")) {
        param->param_kind = TypeParamKind::param_spec;
      }
      param->name = expect_name("a type parameter name");
      if (param->param_kind == TypeParamKind::type_var && accept_op(":")) {
        param->bound = parse_expression();
      }
      if (accept_op("=")) {
        param->default_value =
            param->param_kind == TypeParamKind::type_var_tuple ? parse_star_expression() : parse_expression();
      }
      params.push_back(seal(std::move(param)));
    } while (accept_op(","));
    expect_op("]");
    if (params.empty()) {
      fail("type parameter list cannot be empty", current().location);
    }
    return params;
  }

  // Parameters of a def (closer ")", with annotations) or a lambda (closer ":").
  ParameterList parse_parameters(std::string_view closer, bool with_annotations) {
    ParameterList params;
    ParameterKind kind = ParameterKind::positional_or_keyword;
    bool seen_default = false;
    std::optional<SourceLocation> bare_star;  // `*` without a name needs keyword-only parameters after it
    while (!at_op(closer)) {
      const SourceLocation location = current().location;
      if (accept_op("/")) {
        mark_positional_only(params, kind, location);
      } else if (accept_op("*")) {
        if (kind == ParameterKind::keyword_only) {
          fail("* argument may appear only once", location);
        }
        if (at(TokenKind::name)) {
          params.push_back(parse_parameter(ParameterKind::var_positional, with_annotations));
        } else {
          bare_star = location;
        }
        kind = ParameterKind::keyword_only;
      } else if (accept_op("**")) {
        params.push_back(parse_parameter(ParameterKind::var_keyword, with_annotations));
        accept_op(",");
        if (!at_op(closer)) {
          fail("arguments cannot follow var-keyword argument", current().location);
        }
        break;
      } else {
        auto param = parse_parameter(kind, with_annotations);
        check_default_order(*param, seen_default);
        params.push_back(std::move(param));
        bare_star.reset();
      }
      if (!accept_op(",")) {
        break;
      }
    }
    if (bare_star) {
      fail("named arguments must follow bare *", *bare_star);
    }
    return params;
  }

  static void mark_positional_only(ParameterList& params, ParameterKind kind, SourceLocation location) {
    if (kind != ParameterKind::positional_or_keyword) {
      fail("/ must be ahead of *", location);
    }
    if (params.empty()) {
      fail("at least one argument must precede /", location);
    }
    for (auto& param : params) {
      if (param->parameter_kind == ParameterKind::positional_only) {
        fail("/ may appear only once", location);
      }
      param->parameter_kind = ParameterKind::positional_only;
    }
  }

  static void check_default_order(const Parameter& param, bool& seen_default) {
    if (param.parameter_kind == ParameterKind::keyword_only) {
      return;
    }
    if (param.default_value) {
      seen_default = true;
    } else if (seen_default) {
      fail("parameter without a default follows parameter with a default", param.location);
    }
  }

  std::unique_ptr<Parameter> parse_parameter(ParameterKind kind, bool with_annotations) {
    auto param = make<Parameter>(current().location);
    param->parameter_kind = kind;
    param->name = expect_name("a parameter name");
    if (with_annotations && accept_op(":")) {
      // `*args: *Ts` (PEP 646) allows a starred annotation.
      param->annotation =
          kind == ParameterKind::var_positional ? parse_star_expression() : parse_expression();
    }
    if (kind != ParameterKind::var_positional && kind != ParameterKind::var_keyword && accept_op("=")) {
      param->default_value = parse_expression();
    }
    return seal(std::move(param));
  }

  StmtPtr try_parse_match() {
    const std::size_t saved = pos_;
    const SourceLocation location = current().location;
    ExprPtr subject;
    try {
      advance();
      subject = parse_match_subject();
      expect_op(":");
      if (!at(TokenKind::newline) || peek(1).kind != TokenKind::indent || !peek(2).is_name("case")) {
        fail_invalid_syntax();
      }
    } catch (const ParseFailure&) {
      pos_ = saved;  // not a match statement: `match` is an ordinary name here
      return nullptr;
    }
    advance();
    advance();
    const DepthGuard guard(depth_, location);
    auto node = make<Match>(location);
    node->subject = std::move(subject);
    while (current().is_name("case")) {
      node->cases.push_back(parse_match_case());
    }
    if (!at(TokenKind::dedent) && !at(TokenKind::end_of_input)) {
      fail("expected 'case' block", current().location);
    }
    accept_dedent();
    return seal(std::move(node));
  }

  ExprPtr parse_match_subject() {
    const SourceLocation location = current().location;
    ExprPtr first = parse_star_named_expression();
    if (!at_op(",")) {
      return first;
    }
    auto tuple = make<Tuple>(location);
    tuple->elements.push_back(std::move(first));
    while (accept_op(",")) {
      if (!starts_expression(current())) {
        break;
      }
      tuple->elements.push_back(parse_star_named_expression());
    }
    return seal(std::move(tuple));
  }

  std::unique_ptr<MatchCase> parse_match_case() {
    auto match_case = make<MatchCase>(advance().location);
    match_case->pattern = parse_patterns();
    if (accept_keyword("if")) {
      match_case->guard = parse_named_expression();
    }
    match_case->body = parse_block(match_case->location, "'case' statement");
    return seal(std::move(match_case));
  }

  // ------------------------------------------------------------------------------------------
  // Match patterns (represented with expression nodes, see MatchAs)

  ExprPtr parse_patterns() {
    const SourceLocation location = current().location;
    ExprPtr first = parse_maybe_star_pattern();
    if (!at_op(",")) {
      return first;
    }
    auto tuple = make<Tuple>(location);
    tuple->elements.push_back(std::move(first));
    while (accept_op(",")) {
      if (at_op(":") || at_keyword("if")) {
        break;
      }
      tuple->elements.push_back(parse_maybe_star_pattern());
    }
    return seal(std::move(tuple));
  }

  ExprPtr parse_maybe_star_pattern() {
    if (!at_op("*")) {
      return parse_as_pattern();
    }
    auto starred = make<Starred>(advance().location);
    auto capture = make<Name>(current().location);
    capture->id = expect_name("a name after '*'");
    starred->value = seal(std::move(capture));
    return seal(std::move(starred));
  }

  ExprPtr parse_as_pattern() {
    const SourceLocation location = current().location;
    ExprPtr pattern = parse_or_pattern();
    if (!accept_keyword("as")) {
      return pattern;
    }
    auto node = make<MatchAs>(location);
    node->pattern = std::move(pattern);
    node->name = expect_name("a name after 'as'");
    return seal(std::move(node));
  }

  ExprPtr parse_or_pattern() {
    const SourceLocation location = current().location;
    ExprPtr left = parse_closed_pattern();
    while (accept_op("|")) {
      auto node = make<BinOp>(location);
      node->left = std::move(left);
      node->op = BinaryOperator::bit_or;
      node->right = parse_closed_pattern();
      left = seal(std::move(node));
    }
    return left;
  }

  ExprPtr parse_closed_pattern() {
    const DepthGuard guard(depth_, current().location);
    const Token& token = current();
    if (token.is_op("-") || token.kind == TokenKind::number) {
      return parse_number_pattern();
    }
    if (token.kind == TokenKind::string || token.is_keyword("None") || token.is_keyword("True") ||
        token.is_keyword("False")) {
      return parse_atom();
    }
    if (token.kind == TokenKind::name) {
      return parse_name_pattern();
    }
    if (token.is_op("(")) {
      return parse_group_pattern();
    }
    if (token.is_op("[")) {
      auto list = make<List>(advance().location);
      parse_pattern_sequence(list->elements, "]");
      return seal(std::move(list));
    }
    if (token.is_op("{")) {
      return parse_mapping_pattern();
    }
    fail_invalid_syntax();
  }

  // -1, 3.5, 1+2j, -1-2j
  ExprPtr parse_number_pattern() {
    const SourceLocation location = current().location;
    ExprPtr value = parse_signed_number();
    if (!(at_op("+") || at_op("-"))) {
      return value;
    }
    auto node = make<BinOp>(location);
    node->op = advance().text == "+" ? BinaryOperator::add : BinaryOperator::sub;
    node->left = std::move(value);
    node->right = parse_signed_number();
    return seal(std::move(node));
  }

  ExprPtr parse_signed_number() {
    if (!at_op("-")) {
      if (!at(TokenKind::number)) {
        fail_invalid_syntax();
      }
      return parse_atom();
    }
    auto node = make<UnaryOp>(advance().location);
    node->op = UnaryOperator::minus;
    if (!at(TokenKind::number)) {
      fail_invalid_syntax();
    }
    node->operand = parse_atom();
    return seal(std::move(node));
  }

  // Capture (`x`, `_`), value (`Color.RED`) or class pattern (`Point(x=0, y=0)`).
  ExprPtr parse_name_pattern() {
    const SourceLocation location = current().location;
    auto name = make<Name>(location);
    name->id = advance().text;
    ExprPtr value = seal(std::move(name));
    bool dotted = false;
    while (accept_op(".")) {
      auto attribute = make<Attribute>(location);
      attribute->value = std::move(value);
      attribute->attr = expect_name("an attribute name");
      value = seal(std::move(attribute));
      dotted = true;
    }
    if (at_op("(")) {
      return parse_class_pattern(location, std::move(value));
    }
    if (dotted) {
      return value;
    }
    auto capture = make<MatchAs>(location);
    const std::string& id = node_cast<Name>(*value)->id;
    capture->name = id == "_" ? std::string() : id;
    return seal(std::move(capture));
  }

  ExprPtr parse_class_pattern(SourceLocation location, ExprPtr class_name) {
    advance();
    auto call = make<Call>(location);
    call->func = std::move(class_name);
    while (!at_op(")")) {
      if (at(TokenKind::name) && peek(1).is_op("=")) {
        auto keyword = make<Keyword>(current().location);
        keyword->name = advance().text;
        advance();
        keyword->value = parse_as_pattern();
        call->keywords.push_back(seal(std::move(keyword)));
      } else {
        call->args.push_back(parse_as_pattern());
      }
      if (!accept_op(",")) {
        break;
      }
    }
    expect_op(")");
    return seal(std::move(call));
  }

  ExprPtr parse_group_pattern() {
    const SourceLocation location = advance().location;
    if (accept_op(")")) {
      return seal(make<Tuple>(location));
    }
    ExprPtr first = parse_maybe_star_pattern();
    if (accept_op(")")) {
      return first;
    }
    auto tuple = make<Tuple>(location);
    tuple->elements.push_back(std::move(first));
    expect_op(",");
    parse_pattern_sequence(tuple->elements, ")");
    return seal(std::move(tuple));
  }

  // Comma-separated patterns up to and including `closer`.
  void parse_pattern_sequence(ExprList& elements, std::string_view closer) {
    while (!at_op(closer)) {
      elements.push_back(parse_maybe_star_pattern());
      if (!accept_op(",")) {
        break;
      }
    }
    expect_op(closer);
  }

  ExprPtr parse_mapping_pattern() {
    auto dict = make<Dict>(advance().location);
    while (!at_op("}")) {
      if (accept_op("**")) {
        auto rest = make<Name>(current().location);
        rest->id = expect_name("a name after '**'");
        dict->keys.push_back(nullptr);
        dict->values.push_back(seal(std::move(rest)));
      } else {
        dict->keys.push_back(parse_closed_pattern());
        expect_op(":");
        dict->values.push_back(parse_as_pattern());
      }
      if (!accept_op(",")) {
        break;
      }
    }
    expect_op("}");
    return seal(std::move(dict));
  }

  // ------------------------------------------------------------------------------------------
  // Expressions, lowest precedence first

  ExprPtr parse_star_expressions() {
    const SourceLocation location = current().location;
    ExprPtr first = parse_star_expression();
    if (!at_op(",")) {
      return first;
    }
    auto tuple = make<Tuple>(location);
    tuple->elements.push_back(std::move(first));
    while (accept_op(",")) {
      if (!starts_expression(current())) {
        break;
      }
      tuple->elements.push_back(parse_star_expression());
    }
    return seal(std::move(tuple));
  }

  ExprPtr parse_starred(ExprPtr (Parser::*parse_operand)()) {
    auto starred = make<Starred>(advance().location);
    starred->value = (this->*parse_operand)();
    return seal(std::move(starred));
  }

  ExprPtr parse_star_expression() {
    return at_op("*") ? parse_starred(&Parser::parse_bitwise_or) : parse_expression();
  }

  ExprPtr parse_star_named_expression() {
    return at_op("*") ? parse_starred(&Parser::parse_bitwise_or) : parse_named_expression();
  }

  ExprPtr parse_named_expression() {
    if (!(at(TokenKind::name) && peek(1).is_op(":="))) {
      return parse_expression();
    }
    const SourceLocation location = current().location;
    auto target = make<Name>(location);
    target->id = advance().text;
    advance();
    auto node = make<NamedExpr>(location);
    node->target = seal(std::move(target));
    node->value = parse_expression();
    return seal(std::move(node));
  }

  ExprPtr parse_expression() {
    const DepthGuard guard(depth_, current().location);
    if (at_keyword("lambda")) {
      return parse_lambda();
    }
    const SourceLocation location = current().location;
    ExprPtr body = parse_disjunction();
    if (!accept_keyword("if")) {
      return body;
    }
    auto node = make<IfExp>(location);
    node->body = std::move(body);
    node->test = parse_disjunction();
    expect_keyword("else");
    node->orelse = parse_expression();
    return seal(std::move(node));
  }

  ExprPtr parse_lambda() {
    auto node = make<Lambda>(advance().location);
    node->params = parse_parameters(":", false);
    expect_op(":");
    node->body = parse_expression();
    return seal(std::move(node));
  }

  ExprPtr parse_bool_chain(std::string_view keyword, BoolOperator op, ExprPtr (Parser::*parse_operand)()) {
    const SourceLocation location = current().location;
    ExprPtr first = (this->*parse_operand)();
    if (!at_keyword(keyword)) {
      return first;
    }
    auto node = make<BoolOp>(location);
    node->op = op;
    node->values.push_back(std::move(first));
    while (accept_keyword(keyword)) {
      node->values.push_back((this->*parse_operand)());
    }
    return seal(std::move(node));
  }

  ExprPtr parse_disjunction() {
    return parse_bool_chain("or", BoolOperator::or_, &Parser::parse_conjunction);
  }
  ExprPtr parse_conjunction() {
    return parse_bool_chain("and", BoolOperator::and_, &Parser::parse_inversion);
  }

  ExprPtr parse_inversion() {
    if (!at_keyword("not")) {
      return parse_comparison();
    }
    const DepthGuard guard(depth_, current().location);
    auto node = make<UnaryOp>(advance().location);
    node->op = UnaryOperator::not_;
    node->operand = parse_inversion();
    return seal(std::move(node));
  }

  // The comparison operator at the cursor and how many tokens it spans.
  std::optional<std::pair<CompareOperator, std::size_t>> comparison_operator() const {
    static constexpr std::array<std::pair<std::string_view, CompareOperator>, 6> kSymbols = {{
        {"==", CompareOperator::eq},
        {"!=", CompareOperator::not_eq_},
        {"<", CompareOperator::lt},
        {"<=", CompareOperator::lt_e},
        {">", CompareOperator::gt},
        {">=", CompareOperator::gt_e},
    }};
    for (const auto& [text, op] : kSymbols) {
      if (at_op(text)) {
        return std::pair{op, std::size_t{1}};
      }
    }
    if (at_keyword("in")) {
      return std::pair{CompareOperator::in, std::size_t{1}};
    }
    if (at_keyword("not") && peek(1).is_keyword("in")) {
      return std::pair{CompareOperator::not_in, std::size_t{2}};
    }
    if (at_keyword("is")) {
      return peek(1).is_keyword("not") ? std::pair{CompareOperator::is_not, std::size_t{2}}
                                       : std::pair{CompareOperator::is, std::size_t{1}};
    }
    return std::nullopt;
  }

  ExprPtr parse_comparison() {
    const SourceLocation location = current().location;
    ExprPtr left = parse_bitwise_or();
    std::unique_ptr<Compare> node;
    while (const auto op = comparison_operator()) {
      for (std::size_t i = 0; i < op->second; ++i) {
        advance();
      }
      if (!node) {
        node = make<Compare>(location);
        node->left = std::move(left);
      }
      node->ops.push_back(op->first);
      node->comparators.push_back(parse_bitwise_or());
    }
    if (!node) {
      return left;
    }
    return seal(std::move(node));
  }

  // Left-associative binary operators of one precedence level, built iteratively.
  ExprPtr parse_binary_level(ExprPtr (Parser::*parse_operand)(),
                             std::initializer_list<OperatorSpelling> ops) {
    const SourceLocation location = current().location;
    ExprPtr left = (this->*parse_operand)();
    while (true) {
      const auto* match = std::find_if(
          ops.begin(), ops.end(), [this](const OperatorSpelling& spelling) { return at_op(spelling.text); });
      if (match == ops.end()) {
        return left;
      }
      advance();
      auto node = make<BinOp>(location);
      node->left = std::move(left);
      node->op = match->op;
      node->right = (this->*parse_operand)();
      left = seal(std::move(node));
    }
  }

  ExprPtr parse_bitwise_or() {
    return parse_binary_level(&Parser::parse_bitwise_xor, {{"|", BinaryOperator::bit_or}});
  }
  ExprPtr parse_bitwise_xor() {
    return parse_binary_level(&Parser::parse_bitwise_and, {{"^", BinaryOperator::bit_xor}});
  }
  ExprPtr parse_bitwise_and() {
    return parse_binary_level(&Parser::parse_shift, {{"&", BinaryOperator::bit_and}});
  }
  ExprPtr parse_shift() {
    return parse_binary_level(&Parser::parse_sum,
                              {{"<<", BinaryOperator::lshift}, {">>", BinaryOperator::rshift}});
  }
  ExprPtr parse_sum() {
    return parse_binary_level(&Parser::parse_term, {{"+", BinaryOperator::add}, {"-", BinaryOperator::sub}});
  }
  ExprPtr parse_term() {
    return parse_binary_level(&Parser::parse_factor, {{"*", BinaryOperator::mul},
                                                      {"/", BinaryOperator::div},
                                                      {"//", BinaryOperator::floor_div},
                                                      {"%", BinaryOperator::mod},
                                                      {"@", BinaryOperator::matmul}});
  }

  ExprPtr parse_factor() {
    std::optional<UnaryOperator> op;
    if (at_op("+")) {
      op = UnaryOperator::plus;
    } else if (at_op("-")) {
      op = UnaryOperator::minus;
    } else if (at_op("~")) {
      op = UnaryOperator::invert;
    }
    if (!op) {
      return parse_power();
    }
    const DepthGuard guard(depth_, current().location);
    auto node = make<UnaryOp>(advance().location);
    node->op = *op;
    node->operand = parse_factor();
    return seal(std::move(node));
  }

  ExprPtr parse_power() {
    const SourceLocation location = current().location;
    ExprPtr base = parse_await_primary();
    if (!at_op("**")) {
      return base;
    }
    const DepthGuard guard(depth_, current().location);
    advance();
    auto node = make<BinOp>(location);
    node->left = std::move(base);
    node->op = BinaryOperator::pow;
    node->right = parse_factor();
    return seal(std::move(node));
  }

  ExprPtr parse_await_primary() {
    if (!at_keyword("await")) {
      return parse_primary();
    }
    auto node = make<Await>(advance().location);
    node->value = parse_primary();
    return seal(std::move(node));
  }

  // An atom followed by any number of `.name`, `(args)` and `[subscript]` trailers.
  ExprPtr parse_primary() {
    const SourceLocation location = current().location;
    ExprPtr expr = parse_atom();
    while (true) {
      if (accept_op(".")) {
        auto node = make<Attribute>(location);
        node->value = std::move(expr);
        node->attr = expect_name("an attribute name");
        expr = seal(std::move(node));
      } else if (accept_op("(")) {
        auto node = make<Call>(location);
        node->func = std::move(expr);
        parse_call_arguments(node->args, node->keywords);
        expect_op(")");
        expr = seal(std::move(node));
      } else if (accept_op("[")) {
        auto node = make<Subscript>(location);
        node->value = std::move(expr);
        node->slice = parse_slices();
        expect_op("]");
        expr = seal(std::move(node));
      } else {
        return expr;
      }
    }
  }

  // Order of the arguments seen so far, for CPython's argument-order errors.
  struct ArgumentOrder {
    bool allow_generator = true;  // false for class bases
    bool seen_keyword = false;
    bool seen_double_star = false;
    std::size_t count = 0;
    std::optional<SourceLocation> bare_generator;  // unparenthesized generator argument
  };

  // Call arguments (also class bases), stopping before the closing ')'.
  void parse_call_arguments(ExprList& args, KeywordList& keywords, bool allow_generator = true) {
    ArgumentOrder order;
    order.allow_generator = allow_generator;
    bool trailing_comma = false;
    while (!at_op(")")) {
      parse_call_argument(args, keywords, order);
      ++order.count;
      trailing_comma = accept_op(",");
      if (!trailing_comma) {
        break;
      }
    }
    if (order.bare_generator && (order.count > 1 || trailing_comma)) {
      fail("Generator expression must be parenthesized", *order.bare_generator);
    }
  }

  void parse_call_argument(ExprList& args, KeywordList& keywords, ArgumentOrder& order) {
    const SourceLocation location = current().location;
    if (at_op("*")) {
      if (order.seen_double_star) {
        fail("iterable argument unpacking follows keyword argument unpacking", location);
      }
      args.push_back(parse_starred(&Parser::parse_expression));
      return;
    }
    if (accept_op("**")) {
      order.seen_double_star = true;
      auto keyword = make<Keyword>(location);
      keyword->value = parse_expression();
      keywords.push_back(seal(std::move(keyword)));
      return;
    }
    if (at(TokenKind::name) && peek(1).is_op("=")) {
      order.seen_keyword = true;
      auto keyword = make<Keyword>(location);
      keyword->name = advance().text;
      advance();
      keyword->value = parse_expression();
      keywords.push_back(seal(std::move(keyword)));
      return;
    }
    if (order.seen_double_star || order.seen_keyword) {
      fail(order.seen_double_star ? "positional argument follows keyword argument unpacking"
                                  : "positional argument follows keyword argument",
           location);
    }
    ExprPtr arg = parse_named_expression();
    if (at_comprehension_start()) {
      if (!order.allow_generator) {
        fail_invalid_syntax();
      }
      arg = parse_generator(location, std::move(arg));
      order.bare_generator = location;
    }
    args.push_back(std::move(arg));
  }

  ExprPtr parse_slices() {
    const SourceLocation location = current().location;
    ExprPtr first = parse_slice();
    if (!at_op(",")) {
      return first;
    }
    auto tuple = make<Tuple>(location);
    tuple->elements.push_back(std::move(first));
    while (accept_op(",")) {
      if (at_op("]")) {
        break;
      }
      tuple->elements.push_back(parse_slice());
    }
    return seal(std::move(tuple));
  }

  ExprPtr parse_slice() {
    const SourceLocation location = current().location;
    ExprPtr lower;
    if (!at_op(":")) {
      lower = at_op("*") ? parse_starred(&Parser::parse_bitwise_or) : parse_named_expression();
      if (!at_op(":")) {
        return lower;
      }
    }
    advance();
    auto slice = make<Slice>(location);
    slice->lower = std::move(lower);
    const auto at_slice_end = [this] { return at_op(":") || at_op("]") || at_op(","); };
    if (!at_slice_end()) {
      slice->upper = parse_expression();
    }
    if (accept_op(":") && !at_op("]") && !at_op(",")) {
      slice->step = parse_expression();
    }
    return seal(std::move(slice));
  }

  ExprPtr parse_atom() {
    const Token& token = current();
    switch (token.kind) {
      case TokenKind::name: {
        auto node = make<Name>(token.location);
        node->id = advance().text;
        return seal(std::move(node));
      }
      case TokenKind::number:
        return parse_constant(ConstantKind::number);
      case TokenKind::string:
        return parse_strings();
      case TokenKind::keyword:
        if (token.text == "None") {
          return parse_constant(ConstantKind::none);
        }
        if (token.text == "True") {
          return parse_constant(ConstantKind::true_);
        }
        if (token.text == "False") {
          return parse_constant(ConstantKind::false_);
        }
        break;
      case TokenKind::op:
        if (token.text == "(") {
          return parse_parenthesized();
        }
        if (token.text == "[") {
          return parse_list_display();
        }
        if (token.text == "{") {
          return parse_brace_display();
        }
        if (token.text == "...") {
          return parse_constant(ConstantKind::ellipsis);
        }
        break;
      default:
        break;
    }
    fail_invalid_syntax();
  }

  ExprPtr parse_constant(ConstantKind kind) {
    auto node = make<Constant>(current().location);
    node->constant_kind = kind;
    node->text = advance().text;
    return seal(std::move(node));
  }

  // Adjacent string tokens concatenate; f-string fields are parsed as expressions.
  ExprPtr parse_strings() {
    auto node = make<StringLiteral>(current().location);
    bool has_bytes = false;
    bool has_text = false;
    while (at(TokenKind::string)) {
      const Token& token = advance();
      const StringPrefix prefix = string_prefix_of(token.text);
      (prefix.bytes ? has_bytes : has_text) = true;
      node->parts.push_back(token.text);
      if (!prefix.formatted) {
        DecodedString decoded = decode_literal(token.text);
        if (!decoded.error.empty()) {
          fail("(unicode error) " + decoded.error, token.location);
        }
        node->value += decoded.value;
        continue;
      }
      node->is_fstring = true;
      for (const FStringField& field : token.fstring_fields) {
        node->fstring_values.push_back(parse_fstring_field(field));
      }
    }
    if (has_bytes && has_text) {
      fail("cannot mix bytes and nonbytes literals", node->location);
    }
    node->is_bytes = has_bytes;
    return seal(std::move(node));
  }

  ExprPtr parse_fstring_field(const FStringField& field) {
    const DepthGuard guard(depth_, field.location);
    const TokenizeResult tokens = tokenize(field.expression, {field.location, true});
    if (!tokens.ok()) {
      const std::string& message = tokens.error->message;
      fail(message.starts_with("f-string") ? message : "f-string: " + message, tokens.error->location);
    }
    Parser field_parser(tokens.tokens, depth_);
    return field_parser.parse_fstring_expression();
  }

  ExprPtr parse_parenthesized() {
    const SourceLocation location = advance().location;
    if (accept_op(")")) {
      return seal(make<Tuple>(location));
    }
    if (at_keyword("yield")) {
      ExprPtr yield = parse_yield_expression();
      expect_op(")");
      return yield;
    }
    ExprPtr first = parse_star_named_expression();
    if (at_comprehension_start()) {
      ExprPtr generator = parse_generator(location, std::move(first));
      expect_op(")");
      return generator;
    }
    if (accept_op(")")) {
      return first;
    }
    auto tuple = make<Tuple>(location);
    tuple->elements.push_back(std::move(first));
    parse_display_rest(tuple->elements, ")");
    return seal(std::move(tuple));
  }

  // `, element, element [,]` then the closer.
  void parse_display_rest(ExprList& elements, std::string_view closer) {
    while (accept_op(",")) {
      if (at_op(closer)) {
        break;
      }
      elements.push_back(parse_star_named_expression());
    }
    expect_op(closer);
  }

  ExprPtr parse_list_display() {
    const SourceLocation location = advance().location;
    if (accept_op("]")) {
      return seal(make<List>(location));
    }
    ExprPtr first = parse_star_named_expression();
    if (at_comprehension_start()) {
      auto comp = make<ListComp>(location);
      comp->element = std::move(first);
      comp->generators = parse_comprehension_clauses();
      expect_op("]");
      return seal(std::move(comp));
    }
    auto list = make<List>(location);
    list->elements.push_back(std::move(first));
    parse_display_rest(list->elements, "]");
    return seal(std::move(list));
  }

  ExprPtr parse_brace_display() {
    const SourceLocation location = advance().location;
    if (accept_op("}")) {
      return seal(make<Dict>(location));
    }
    if (at_op("**")) {
      auto dict = make<Dict>(location);
      parse_dict_entries(*dict);
      return seal(std::move(dict));
    }
    ExprPtr first = parse_star_named_expression();
    if (accept_op(":")) {
      return parse_dict_rest(location, std::move(first));
    }
    if (at_comprehension_start()) {
      auto comp = make<SetComp>(location);
      comp->element = std::move(first);
      comp->generators = parse_comprehension_clauses();
      expect_op("}");
      return seal(std::move(comp));
    }
    auto set = make<Set>(location);
    set->elements.push_back(std::move(first));
    parse_display_rest(set->elements, "}");
    return seal(std::move(set));
  }

  ExprPtr parse_dict_rest(SourceLocation location, ExprPtr first_key) {
    ExprPtr first_value = parse_expression();
    if (at_comprehension_start()) {
      auto comp = make<DictComp>(location);
      comp->key = std::move(first_key);
      comp->value = std::move(first_value);
      comp->generators = parse_comprehension_clauses();
      expect_op("}");
      return seal(std::move(comp));
    }
    auto dict = make<Dict>(location);
    dict->keys.push_back(std::move(first_key));
    dict->values.push_back(std::move(first_value));
    if (accept_op(",")) {
      parse_dict_entries(*dict);
    } else {
      expect_op("}");
    }
    return seal(std::move(dict));
  }

  // `key: value` and `**mapping` entries up to and including the closing '}'.
  void parse_dict_entries(Dict& dict) {
    while (!at_op("}")) {
      if (accept_op("**")) {
        dict.keys.push_back(nullptr);
        dict.values.push_back(parse_bitwise_or());
      } else {
        dict.keys.push_back(parse_expression());
        expect_op(":");
        dict.values.push_back(parse_expression());
      }
      if (!accept_op(",")) {
        break;
      }
    }
    expect_op("}");
  }

  bool at_comprehension_start() const {
    return at_keyword("for") || (at_keyword("async") && peek(1).is_keyword("for"));
  }

  ComprehensionList parse_comprehension_clauses() {
    ComprehensionList generators;
    while (at_comprehension_start()) {
      auto clause = make<Comprehension>(current().location);
      clause->is_async = accept_keyword("async");
      expect_keyword("for");
      clause->target = parse_target_list();
      check_assignable(*clause->target, "assign to");
      expect_keyword("in");
      clause->iter = parse_disjunction();
      while (accept_keyword("if")) {
        clause->ifs.push_back(parse_disjunction());
      }
      generators.push_back(seal(std::move(clause)));
    }
    return generators;
  }

  ExprPtr parse_generator(SourceLocation location, ExprPtr element) {
    auto generator = make<GeneratorExp>(location);
    generator->element = std::move(element);
    generator->generators = parse_comprehension_clauses();
    return seal(std::move(generator));
  }

  ExprPtr parse_yield_expression() {
    const SourceLocation location = advance().location;
    if (accept_keyword("from")) {
      auto node = make<YieldFrom>(location);
      node->value = parse_expression();
      return seal(std::move(node));
    }
    auto node = make<Yield>(location);
    if (starts_expression(current())) {
      node->value = parse_star_expressions();
    }
    return seal(std::move(node));
  }

  // Loop and comprehension targets: parsed at bitwise-or level so `in` is not swallowed.
  ExprPtr parse_target_list() {
    const SourceLocation location = current().location;
    ExprPtr first = parse_target();
    if (!at_op(",")) {
      return first;
    }
    auto tuple = make<Tuple>(location);
    tuple->elements.push_back(std::move(first));
    while (accept_op(",")) {
      if (!starts_target(current())) {
        break;
      }
      tuple->elements.push_back(parse_target());
    }
    return seal(std::move(tuple));
  }

  ExprPtr parse_target() {
    return at_op("*") ? parse_starred(&Parser::parse_bitwise_or) : parse_bitwise_or();
  }

  std::span<const Token> tokens_;
  std::size_t pos_ = 0;
  int depth_;
};

}  // namespace

std::string decode_string_literal(std::string_view literal) { return decode_literal(literal).value; }

ParseResult parse_module(std::string_view source) {
  ParseResult result;
  TokenizeResult tokens = tokenize(source);
  result.comments = std::move(tokens.comments);
  if (!tokens.ok()) {
    result.error = SyntaxError{tokens.error->message, tokens.error->location};
    return result;
  }
  try {
    Parser parser(tokens.tokens, 0);
    result.module = parser.parse_module();
  } catch (const ParseFailure& failure) {
    result.error = SyntaxError{failure.message(), failure.location()};
  }
  return result;
}

}  // namespace kforge::source
