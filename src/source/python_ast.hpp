#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "source/source_location.hpp"

// Python abstract syntax tree, shaped after CPython's `ast` module. Every node carries its
// location (start of its first token, as in CPython) and can enumerate its children, so rules
// can walk any tree generically with walk() or inspect specific nodes via node_cast<T>().
namespace kforge::source {

enum class NodeKind : std::uint8_t {
  // Expressions
  name,
  constant,
  string,
  attribute,
  subscript,
  slice,
  call,
  starred,
  unary_op,
  binary_op,
  bool_op,
  compare,
  if_exp,
  lambda,
  named_expr,
  await_expr,
  yield_expr,
  yield_from,
  tuple,
  list,
  set,
  dict,
  list_comp,
  set_comp,
  dict_comp,
  generator_exp,
  match_as,
  // Statements
  module,
  function_def,
  class_def,
  return_stmt,
  delete_stmt,
  assign,
  aug_assign,
  ann_assign,
  for_stmt,
  while_stmt,
  if_stmt,
  with_stmt,
  match_stmt,
  raise_stmt,
  try_stmt,
  assert_stmt,
  import_stmt,
  import_from,
  global_stmt,
  nonlocal_stmt,
  expr_stmt,
  pass_stmt,
  break_stmt,
  continue_stmt,
  type_alias,
  // Parts of statements and expressions
  keyword,
  comprehension,
  parameter,
  type_param,
  with_item,
  except_handler,
  match_case,
  alias,
};

std::string_view to_string(NodeKind kind);

class Node;

// A non-owning reference to a callable taking a Node, valid while that callable lives. Walks call
// it once per node; a std::function there cost a type-erased call and a manager call per step.
class ChildVisitor {
 public:
  // A lambda converts implicitly; the constraint keeps copies and moves on the implicit members.
  // NOLINTBEGIN(google-explicit-constructor, bugprone-forwarding-reference-overload)
  template <class Callable>
  requires(!std::is_same_v<std::remove_cvref_t<Callable>, ChildVisitor> &&
           std::is_invocable_v<Callable&, const Node&>) ChildVisitor(Callable&& callable)
      : callable_(static_cast<const void*>(std::addressof(callable))),
        call_([](const void* target, const Node& node) {
          using Target = std::remove_reference_t<Callable>;
          // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): restores the callable's own constness
          (*static_cast<Target*>(const_cast<void*>(target)))(node);
        }) {}
  // NOLINTEND(google-explicit-constructor, bugprone-forwarding-reference-overload)

  void operator()(const Node& node) const { call_(callable_, node); }

 private:
  const void* callable_;
  void (*call_)(const void*, const Node&);
};

class Node {
 public:
  Node(const Node&) = delete;
  Node(Node&&) = delete;
  Node& operator=(const Node&) = delete;
  Node& operator=(Node&&) = delete;
  virtual ~Node() = default;

  NodeKind kind() const { return kind_; }
  // Calls `visit` on each direct child in source order (null children are skipped).
  virtual void for_each_child(const ChildVisitor& visit) const = 0;

  SourceLocation location;
  // Height of the subtree rooted here (a leaf has height 1); the parser bounds it so that
  // recursive walks and destruction stay shallow.
  int height = 1;

 protected:
  Node(NodeKind kind, SourceLocation node_location) : location(node_location), kind_(kind) {}

 private:
  NodeKind kind_;
};

class Expr : public Node {
 protected:
  using Node::Node;
};

class Stmt : public Node {
 protected:
  using Node::Node;
};

using NodePtr = std::unique_ptr<Node>;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using ExprList = std::vector<ExprPtr>;
using StmtList = std::vector<StmtPtr>;

namespace detail {

template <class T>
void visit_child(const ChildVisitor& visit, const std::unique_ptr<T>& child) {
  if (child) {
    visit(*child);
  }
}

template <class T>
void visit_child(const ChildVisitor& visit, const std::vector<std::unique_ptr<T>>& children) {
  for (const auto& child : children) {
    visit_child(visit, child);
  }
}

template <class... Children>
void visit_children(const ChildVisitor& visit, const Children&... children) {
  (visit_child(visit, children), ...);
}

}  // namespace detail

// Base of each concrete node type; fixes its NodeKind (exposed as T::kKind for node_cast).
template <class Base, NodeKind Kind>
class NodeOf : public Base {
 public:
  static constexpr NodeKind kKind = Kind;
  explicit NodeOf(SourceLocation node_location) : Base(Kind, node_location) {}
};

template <NodeKind Kind>
using ExprNode = NodeOf<Expr, Kind>;
template <NodeKind Kind>
using StmtNode = NodeOf<Stmt, Kind>;
template <NodeKind Kind>
using PartNode = NodeOf<Node, Kind>;

enum class BinaryOperator : std::uint8_t {
  add,
  sub,
  mul,
  matmul,
  div,
  floor_div,
  mod,
  pow,
  lshift,
  rshift,
  bit_or,
  bit_xor,
  bit_and,
};
enum class UnaryOperator : std::uint8_t { not_, invert, plus, minus };
enum class BoolOperator : std::uint8_t { and_, or_ };
enum class CompareOperator : std::uint8_t { eq, not_eq_, lt, lt_e, gt, gt_e, is, is_not, in, not_in };

// Python spelling of an operator, e.g. "//", "not", "is not".
std::string_view to_string(BinaryOperator op);
std::string_view to_string(UnaryOperator op);
std::string_view to_string(BoolOperator op);
std::string_view to_string(CompareOperator op);

// ---------------------------------------------------------------------------------------------
// Parts shared by statements and expressions

// `name=value` in a call or class header; an empty name means `**value`.
struct Keyword final : PartNode<NodeKind::keyword> {
  using NodeOf::NodeOf;
  std::string name;
  ExprPtr value;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, value); }
};
using KeywordList = std::vector<std::unique_ptr<Keyword>>;

// One `for target in iter if cond...` clause of a comprehension.
struct Comprehension final : PartNode<NodeKind::comprehension> {
  using NodeOf::NodeOf;
  ExprPtr target;
  ExprPtr iter;
  ExprList ifs;
  bool is_async = false;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, target, iter, ifs);
  }
};
using ComprehensionList = std::vector<std::unique_ptr<Comprehension>>;

enum class ParameterKind : std::uint8_t {
  positional_only,        // before `/`
  positional_or_keyword,  // plain
  var_positional,         // *args
  keyword_only,           // after `*` or `*args`
  var_keyword,            // **kwargs
};

struct Parameter final : PartNode<NodeKind::parameter> {
  using NodeOf::NodeOf;
  std::string name;
  ParameterKind parameter_kind = ParameterKind::positional_or_keyword;
  ExprPtr annotation;
  ExprPtr default_value;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, annotation, default_value);
  }
};
using ParameterList = std::vector<std::unique_ptr<Parameter>>;

enum class TypeParamKind : std::uint8_t { type_var, type_var_tuple, param_spec };

// PEP 695 type parameter: `T: bound`, `*Ts`, `**P` (with an optional PEP 696 default).
struct TypeParam final : PartNode<NodeKind::type_param> {
  using NodeOf::NodeOf;
  std::string name;
  TypeParamKind param_kind = TypeParamKind::type_var;
  ExprPtr bound;
  ExprPtr default_value;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, bound, default_value);
  }
};
using TypeParamList = std::vector<std::unique_ptr<TypeParam>>;

// ---------------------------------------------------------------------------------------------
// Expressions

struct Name final : ExprNode<NodeKind::name> {
  using NodeOf::NodeOf;
  std::string id;
  void for_each_child(const ChildVisitor& /*visit*/) const override {}
};

enum class ConstantKind : std::uint8_t { none, true_, false_, ellipsis, number };

// None, True, False, `...` or a numeric literal (kept as its source text).
struct Constant final : ExprNode<NodeKind::constant> {
  using NodeOf::NodeOf;
  ConstantKind constant_kind = ConstantKind::none;
  std::string text;
  void for_each_child(const ChildVisitor& /*visit*/) const override {}
};

// One string literal or several implicitly concatenated ones ("a" f"b{c}").
struct StringLiteral final : ExprNode<NodeKind::string> {
  using NodeOf::NodeOf;
  std::vector<std::string> parts;  // source text of each literal, with prefix and quotes
  std::string value;               // decoded value of the non-f-string parts, concatenated
  bool is_bytes = false;
  bool is_fstring = false;  // at least one part is an f-string
  ExprList fstring_values;  // expressions of all replacement fields, in source order
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, fstring_values);
  }
};

struct Attribute final : ExprNode<NodeKind::attribute> {
  using NodeOf::NodeOf;
  ExprPtr value;
  std::string attr;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, value); }
};

// value[slice]; several subscripts form a Tuple slice.
struct Subscript final : ExprNode<NodeKind::subscript> {
  using NodeOf::NodeOf;
  ExprPtr value;
  ExprPtr slice;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, value, slice);
  }
};

struct Slice final : ExprNode<NodeKind::slice> {
  using NodeOf::NodeOf;
  ExprPtr lower;
  ExprPtr upper;
  ExprPtr step;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, lower, upper, step);
  }
};

// func(args..., keywords...); `*x` arguments are Starred, `**x` are keywords with empty names.
struct Call final : ExprNode<NodeKind::call> {
  using NodeOf::NodeOf;
  ExprPtr func;
  ExprList args;
  KeywordList keywords;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, func, args, keywords);
  }
};

struct Starred final : ExprNode<NodeKind::starred> {
  using NodeOf::NodeOf;
  ExprPtr value;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, value); }
};

struct UnaryOp final : ExprNode<NodeKind::unary_op> {
  using NodeOf::NodeOf;
  UnaryOperator op = UnaryOperator::not_;
  ExprPtr operand;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, operand); }
};

struct BinOp final : ExprNode<NodeKind::binary_op> {
  using NodeOf::NodeOf;
  ExprPtr left;
  BinaryOperator op = BinaryOperator::add;
  ExprPtr right;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, left, right);
  }
};

// a and b and c (flat, like CPython).
struct BoolOp final : ExprNode<NodeKind::bool_op> {
  using NodeOf::NodeOf;
  BoolOperator op = BoolOperator::and_;
  ExprList values;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, values); }
};

// left op0 comparators[0] op1 comparators[1] ... (chained comparison).
struct Compare final : ExprNode<NodeKind::compare> {
  using NodeOf::NodeOf;
  ExprPtr left;
  std::vector<CompareOperator> ops;
  ExprList comparators;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, left, comparators);
  }
};

// body if test else orelse
struct IfExp final : ExprNode<NodeKind::if_exp> {
  using NodeOf::NodeOf;
  ExprPtr test;
  ExprPtr body;
  ExprPtr orelse;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, body, test, orelse);
  }
};

struct Lambda final : ExprNode<NodeKind::lambda> {
  using NodeOf::NodeOf;
  ParameterList params;
  ExprPtr body;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, params, body);
  }
};

// target := value
struct NamedExpr final : ExprNode<NodeKind::named_expr> {
  using NodeOf::NodeOf;
  ExprPtr target;
  ExprPtr value;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, target, value);
  }
};

struct Await final : ExprNode<NodeKind::await_expr> {
  using NodeOf::NodeOf;
  ExprPtr value;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, value); }
};

struct Yield final : ExprNode<NodeKind::yield_expr> {
  using NodeOf::NodeOf;
  ExprPtr value;  // may be null
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, value); }
};

struct YieldFrom final : ExprNode<NodeKind::yield_from> {
  using NodeOf::NodeOf;
  ExprPtr value;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, value); }
};

struct Tuple final : ExprNode<NodeKind::tuple> {
  using NodeOf::NodeOf;
  ExprList elements;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, elements); }
};

struct List final : ExprNode<NodeKind::list> {
  using NodeOf::NodeOf;
  ExprList elements;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, elements); }
};

struct Set final : ExprNode<NodeKind::set> {
  using NodeOf::NodeOf;
  ExprList elements;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, elements); }
};

// {k: v, **m}: a null key marks a `**m` entry.
struct Dict final : ExprNode<NodeKind::dict> {
  using NodeOf::NodeOf;
  ExprList keys;
  ExprList values;
  void for_each_child(const ChildVisitor& visit) const override;
};

struct ListComp final : ExprNode<NodeKind::list_comp> {
  using NodeOf::NodeOf;
  ExprPtr element;
  ComprehensionList generators;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, element, generators);
  }
};

struct SetComp final : ExprNode<NodeKind::set_comp> {
  using NodeOf::NodeOf;
  ExprPtr element;
  ComprehensionList generators;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, element, generators);
  }
};

struct DictComp final : ExprNode<NodeKind::dict_comp> {
  using NodeOf::NodeOf;
  ExprPtr key;
  ExprPtr value;
  ComprehensionList generators;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, key, value, generators);
  }
};

struct GeneratorExp final : ExprNode<NodeKind::generator_exp> {
  using NodeOf::NodeOf;
  ExprPtr element;
  ComprehensionList generators;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, element, generators);
  }
};

// Capture in a match pattern: `pattern as name`; a null pattern is a bare capture or `_`.
// Other patterns are represented with ordinary expression nodes (Constant, Name, Attribute, Call
// for class patterns, List/Tuple for sequences, Dict for mappings, BinOp `|` for alternatives).
struct MatchAs final : ExprNode<NodeKind::match_as> {
  using NodeOf::NodeOf;
  ExprPtr pattern;
  std::string name;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, pattern); }
};

// ---------------------------------------------------------------------------------------------
// Statements

struct FunctionDef final : StmtNode<NodeKind::function_def> {
  using NodeOf::NodeOf;
  ExprList decorators;
  std::string name;
  TypeParamList type_params;
  ParameterList params;
  ExprPtr returns;
  StmtList body;
  bool is_async = false;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, decorators, type_params, params, returns, body);
  }
};

struct ClassDef final : StmtNode<NodeKind::class_def> {
  using NodeOf::NodeOf;
  ExprList decorators;
  std::string name;
  TypeParamList type_params;
  ExprList bases;
  KeywordList keywords;
  StmtList body;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, decorators, type_params, bases, keywords, body);
  }
};

struct Return final : StmtNode<NodeKind::return_stmt> {
  using NodeOf::NodeOf;
  ExprPtr value;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, value); }
};

struct Delete final : StmtNode<NodeKind::delete_stmt> {
  using NodeOf::NodeOf;
  ExprList targets;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, targets); }
};

// targets[0] = targets[1] = ... = value
struct Assign final : StmtNode<NodeKind::assign> {
  using NodeOf::NodeOf;
  ExprList targets;
  ExprPtr value;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, targets, value);
  }
};

struct AugAssign final : StmtNode<NodeKind::aug_assign> {
  using NodeOf::NodeOf;
  ExprPtr target;
  BinaryOperator op = BinaryOperator::add;
  ExprPtr value;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, target, value);
  }
};

struct AnnAssign final : StmtNode<NodeKind::ann_assign> {
  using NodeOf::NodeOf;
  ExprPtr target;
  ExprPtr annotation;
  ExprPtr value;  // may be null
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, target, annotation, value);
  }
};

struct For final : StmtNode<NodeKind::for_stmt> {
  using NodeOf::NodeOf;
  ExprPtr target;
  ExprPtr iter;
  StmtList body;
  StmtList orelse;
  bool is_async = false;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, target, iter, body, orelse);
  }
};

struct While final : StmtNode<NodeKind::while_stmt> {
  using NodeOf::NodeOf;
  ExprPtr test;
  StmtList body;
  StmtList orelse;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, test, body, orelse);
  }
};

// `elif` is an If nested alone in orelse, as in CPython.
struct If final : StmtNode<NodeKind::if_stmt> {
  using NodeOf::NodeOf;
  ExprPtr test;
  StmtList body;
  StmtList orelse;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, test, body, orelse);
  }
};

struct WithItem final : PartNode<NodeKind::with_item> {
  using NodeOf::NodeOf;
  ExprPtr context_expr;
  ExprPtr optional_vars;  // target after `as`, may be null
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, context_expr, optional_vars);
  }
};

struct With final : StmtNode<NodeKind::with_stmt> {
  using NodeOf::NodeOf;
  std::vector<std::unique_ptr<WithItem>> items;
  StmtList body;
  bool is_async = false;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, items, body);
  }
};

struct MatchCase final : PartNode<NodeKind::match_case> {
  using NodeOf::NodeOf;
  ExprPtr pattern;
  ExprPtr guard;  // may be null
  StmtList body;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, pattern, guard, body);
  }
};

struct Match final : StmtNode<NodeKind::match_stmt> {
  using NodeOf::NodeOf;
  ExprPtr subject;
  std::vector<std::unique_ptr<MatchCase>> cases;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, subject, cases);
  }
};

struct Raise final : StmtNode<NodeKind::raise_stmt> {
  using NodeOf::NodeOf;
  ExprPtr exception;  // may be null (re-raise)
  ExprPtr cause;      // `from` clause, may be null
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, exception, cause);
  }
};

struct ExceptHandler final : PartNode<NodeKind::except_handler> {
  using NodeOf::NodeOf;
  ExprPtr type;      // may be null (bare except)
  std::string name;  // `as name`, may be empty
  StmtList body;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, type, body); }
};

struct Try final : StmtNode<NodeKind::try_stmt> {
  using NodeOf::NodeOf;
  StmtList body;
  std::vector<std::unique_ptr<ExceptHandler>> handlers;
  StmtList orelse;
  StmtList finalbody;
  bool is_star = false;  // except* (exception groups)
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, body, handlers, orelse, finalbody);
  }
};

struct Assert final : StmtNode<NodeKind::assert_stmt> {
  using NodeOf::NodeOf;
  ExprPtr test;
  ExprPtr message;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, test, message);
  }
};

// `name as asname` in an import; name may be dotted ("a.b.c") or "*".
struct Alias final : PartNode<NodeKind::alias> {
  using NodeOf::NodeOf;
  std::string name;
  std::string asname;  // empty when there is no `as`
  void for_each_child(const ChildVisitor& /*visit*/) const override {}
};
using AliasList = std::vector<std::unique_ptr<Alias>>;

struct Import final : StmtNode<NodeKind::import_stmt> {
  using NodeOf::NodeOf;
  AliasList names;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, names); }
};

// from <level dots><module> import names
struct ImportFrom final : StmtNode<NodeKind::import_from> {
  using NodeOf::NodeOf;
  std::string module;  // may be empty for `from . import x`
  int level = 0;       // number of leading dots
  AliasList names;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, names); }
};

struct Global final : StmtNode<NodeKind::global_stmt> {
  using NodeOf::NodeOf;
  std::vector<std::string> names;
  void for_each_child(const ChildVisitor& /*visit*/) const override {}
};

struct Nonlocal final : StmtNode<NodeKind::nonlocal_stmt> {
  using NodeOf::NodeOf;
  std::vector<std::string> names;
  void for_each_child(const ChildVisitor& /*visit*/) const override {}
};

struct ExprStmt final : StmtNode<NodeKind::expr_stmt> {
  using NodeOf::NodeOf;
  ExprPtr value;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, value); }
};

struct Pass final : StmtNode<NodeKind::pass_stmt> {
  using NodeOf::NodeOf;
  void for_each_child(const ChildVisitor& /*visit*/) const override {}
};

struct Break final : StmtNode<NodeKind::break_stmt> {
  using NodeOf::NodeOf;
  void for_each_child(const ChildVisitor& /*visit*/) const override {}
};

struct Continue final : StmtNode<NodeKind::continue_stmt> {
  using NodeOf::NodeOf;
  void for_each_child(const ChildVisitor& /*visit*/) const override {}
};

// type Name[params] = value (PEP 695)
struct TypeAlias final : StmtNode<NodeKind::type_alias> {
  using NodeOf::NodeOf;
  std::string name;
  TypeParamList type_params;
  ExprPtr value;
  void for_each_child(const ChildVisitor& visit) const override {
    detail::visit_children(visit, type_params, value);
  }
};

struct Module final : StmtNode<NodeKind::module> {
  using NodeOf::NodeOf;
  StmtList body;
  void for_each_child(const ChildVisitor& visit) const override { detail::visit_children(visit, body); }
};

// ---------------------------------------------------------------------------------------------
// Generic access

// The node as a T, or null when it is of another kind. The kind names exactly one final class, so
// the downcast needs no RTTI (a dynamic_cast here was 4% of screening a candidate).
template <class T>
const T* node_cast(const Node* node) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-static-cast-downcast): checked by kind just before
  return node != nullptr && node->kind() == T::kKind ? static_cast<const T*>(node) : nullptr;
}

template <class T>
const T* node_cast(const Node& node) {
  return node_cast<T>(&node);
}

// True for the kinds whose nodes are Exprs: they come first in NodeKind, up to match_as.
constexpr bool is_expression(NodeKind kind) { return kind <= NodeKind::match_as; }

// The node as an Expr, or null when it is a statement or a part; by kind, like node_cast.
inline const Expr* expr_cast(const Node* node) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-static-cast-downcast): checked by kind just before
  return node != nullptr && is_expression(node->kind()) ? static_cast<const Expr*>(node) : nullptr;
}

// The node as an Expr; throws std::bad_cast (as dynamic_cast would) when it is not one.
const Expr& as_expr(const Node& node);

std::vector<const Node*> children_of(const Node& node);

// Appends `make(child)` for each direct child of `node` to the stack `pending` in reverse source
// order, so that popping from the back visits them in source order. Iterative walks use it instead
// of children_of(), which allocates a vector per node.
template <class Stack, class Make>
void push_children_reversed(const Node& node, Stack& pending, const Make& make) {
  const auto first = static_cast<std::ptrdiff_t>(pending.size());
  node.for_each_child([&pending, &make](const Node& child) { pending.push_back(make(child)); });
  std::reverse(pending.begin() + first, pending.end());
}

enum class WalkAction : std::uint8_t { visit_children, skip_children };

// Pre-order traversal of `root` and all its descendants, in source order. Iterative, so it is
// safe on any tree. `visitor(node)` returns WalkAction::skip_children to prune the subtree below
// a node. A template so the visitor is called directly: every rule walks the whole module.
template <class Visitor>
void walk(const Node& root, Visitor&& visitor) {
  std::vector<const Node*> pending{&root};
  while (!pending.empty()) {
    const Node* node = pending.back();
    pending.pop_back();
    if (visitor(*node) == WalkAction::skip_children) {
      continue;
    }
    push_children_reversed(*node, pending, [](const Node& child) { return &child; });
  }
}

// "a.b.c" for a Name/Attribute chain, empty for anything else (e.g. a call in the chain).
std::string dotted_name(const Expr& expr);

// Compact one-line rendering for tests and debugging: `Kind[label](child, ...)`, e.g.
// `BinOp[+](Name[a], Constant[1])`. Labels carry names, operators and literal text.
std::string dump_tree(const Node& node);

}  // namespace kforge::source
