#include "source/python_ast.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <typeinfo>
#include <utility>

namespace kforge::source {
namespace {

constexpr std::array<std::string_view, 60> kNodeKindNames = {
    "Name",        "Constant",      "String",     "Attribute", "Subscript",     "Slice",     "Call",
    "Starred",     "UnaryOp",       "BinOp",      "BoolOp",    "Compare",       "IfExp",     "Lambda",
    "NamedExpr",   "Await",         "Yield",      "YieldFrom", "Tuple",         "List",      "Set",
    "Dict",        "ListComp",      "SetComp",    "DictComp",  "GeneratorExp",  "MatchAs",   "Module",
    "FunctionDef", "ClassDef",      "Return",     "Delete",    "Assign",        "AugAssign", "AnnAssign",
    "For",         "While",         "If",         "With",      "Match",         "Raise",     "Try",
    "Assert",      "Import",        "ImportFrom", "Global",    "Nonlocal",      "Expr",      "Pass",
    "Break",       "Continue",      "TypeAlias",  "keyword",   "comprehension", "arg",       "TypeParam",
    "withitem",    "ExceptHandler", "match_case", "alias"};

constexpr std::array<std::string_view, 13> kBinaryOperatorNames = {"+",  "-",  "*",  "@", "/", "//", "%",
                                                                   "**", "<<", ">>", "|", "^", "&"};
constexpr std::array<std::string_view, 4> kUnaryOperatorNames = {"not", "~", "+", "-"};
constexpr std::array<std::string_view, 2> kBoolOperatorNames = {"and", "or"};
constexpr std::array<std::string_view, 10> kCompareOperatorNames = {"==", "!=", "<",      "<=", ">",
                                                                    ">=", "is", "is not", "in", "not in"};

template <std::size_t N, class Enum>
std::string_view name_of(const std::array<std::string_view, N>& names, Enum value) {
  const auto index = static_cast<std::size_t>(value);
  return index < names.size() ? names[index] : std::string_view("?");
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string text;
  for (const std::string& part : parts) {
    text += (text.empty() ? "" : std::string(separator)) + part;
  }
  return text;
}

std::string expression_label(const Node& node) {
  switch (node.kind()) {
    case NodeKind::name:
      return node_cast<Name>(node)->id;
    case NodeKind::constant:
      return node_cast<Constant>(node)->text;
    case NodeKind::string: {
      const auto& string = *node_cast<StringLiteral>(node);
      return string.is_fstring ? join(string.parts, " ") : string.value;
    }
    case NodeKind::attribute:
      return node_cast<Attribute>(node)->attr;
    case NodeKind::unary_op:
      return std::string(to_string(node_cast<UnaryOp>(node)->op));
    case NodeKind::binary_op:
      return std::string(to_string(node_cast<BinOp>(node)->op));
    case NodeKind::bool_op:
      return std::string(to_string(node_cast<BoolOp>(node)->op));
    case NodeKind::compare: {
      std::vector<std::string> ops;
      for (const CompareOperator op : node_cast<Compare>(node)->ops) {
        ops.emplace_back(to_string(op));
      }
      return join(ops, ",");
    }
    case NodeKind::match_as:
      return node_cast<MatchAs>(node)->name;
    default:
      return {};
  }
}

std::string statement_label(const Node& node) {
  switch (node.kind()) {
    case NodeKind::function_def:
      return (node_cast<FunctionDef>(node)->is_async ? "async " : "") + node_cast<FunctionDef>(node)->name;
    case NodeKind::class_def:
      return node_cast<ClassDef>(node)->name;
    case NodeKind::aug_assign:
      return std::string(to_string(node_cast<AugAssign>(node)->op)) + "=";
    case NodeKind::import_from: {
      const auto& import = *node_cast<ImportFrom>(node);
      return std::string(static_cast<std::size_t>(import.level), '.') + import.module;
    }
    case NodeKind::global_stmt:
      return join(node_cast<Global>(node)->names, ",");
    case NodeKind::nonlocal_stmt:
      return join(node_cast<Nonlocal>(node)->names, ",");
    case NodeKind::type_alias:
      return node_cast<TypeAlias>(node)->name;
    case NodeKind::try_stmt:
      return node_cast<Try>(node)->is_star ? "*" : "";
    default:
      return {};
  }
}

std::string part_label(const Node& node) {
  switch (node.kind()) {
    case NodeKind::keyword:
      return node_cast<Keyword>(node)->name;
    case NodeKind::parameter:
      return node_cast<Parameter>(node)->name;
    case NodeKind::type_param:
      return node_cast<TypeParam>(node)->name;
    case NodeKind::except_handler:
      return node_cast<ExceptHandler>(node)->name;
    case NodeKind::alias: {
      const auto& alias = *node_cast<Alias>(node);
      return alias.asname.empty() ? alias.name : alias.name + " as " + alias.asname;
    }
    default:
      return {};
  }
}

std::string node_label(const Node& node) {
  std::string label = expression_label(node);
  if (label.empty()) {
    label = statement_label(node);
  }
  return label.empty() ? part_label(node) : label;
}

}  // namespace

std::string_view to_string(NodeKind kind) { return name_of(kNodeKindNames, kind); }
std::string_view to_string(BinaryOperator op) { return name_of(kBinaryOperatorNames, op); }
std::string_view to_string(UnaryOperator op) { return name_of(kUnaryOperatorNames, op); }
std::string_view to_string(BoolOperator op) { return name_of(kBoolOperatorNames, op); }
std::string_view to_string(CompareOperator op) { return name_of(kCompareOperatorNames, op); }

void Dict::for_each_child(const ChildVisitor& visit) const {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i < keys.size()) {
      detail::visit_child(visit, keys[i]);
    }
    detail::visit_child(visit, values[i]);
  }
}

const Expr& as_expr(const Node& node) {
  const Expr* expr = expr_cast(&node);
  if (expr == nullptr) {
    throw std::bad_cast();
  }
  return *expr;
}

std::vector<const Node*> children_of(const Node& node) {
  std::vector<const Node*> children;
  node.for_each_child([&children](const Node& child) { children.push_back(&child); });
  return children;
}

std::string dotted_name(const Expr& expr) {
  std::vector<std::string_view> parts;
  const Expr* current = &expr;
  while (const auto* attribute = node_cast<Attribute>(current)) {
    parts.push_back(attribute->attr);
    current = attribute->value.get();
  }
  const auto* root = node_cast<Name>(current);
  if (root == nullptr) {
    return {};
  }
  std::string result = root->id;
  std::for_each(parts.rbegin(), parts.rend(), [&result](std::string_view part) {
    result += '.';
    result += part;
  });
  return result;
}

std::string dump_tree(const Node& node) {
  std::string text(to_string(node.kind()));
  const std::string label = node_label(node);
  if (!label.empty()) {
    text += "[" + label + "]";
  }
  std::vector<std::string> children;
  node.for_each_child([&children](const Node& child) { children.push_back(dump_tree(child)); });
  if (!children.empty() || node.kind() == NodeKind::tuple || node.kind() == NodeKind::list ||
      node.kind() == NodeKind::dict || node.kind() == NodeKind::set) {
    text += "(" + join(children, ", ") + ")";
  }
  return text;
}

}  // namespace kforge::source
