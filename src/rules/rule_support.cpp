#include "rules/rule_support.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace kforge::rules {
namespace {

using source::Node;

// Bounds spelling() on pathological expressions.
constexpr int kMaxSpellingDepth = 24;

template <class T>
void push_reversed(const std::vector<std::unique_ptr<T>>& nodes, std::vector<const Node*>& pending) {
  std::for_each(nodes.rbegin(), nodes.rend(), [&pending](const std::unique_ptr<T>& node) {
    if (node) {
      pending.push_back(node.get());
    }
  });
}

template <class T>
void push_optional(const std::unique_ptr<T>& node, std::vector<const Node*>& pending) {
  if (node) {
    pending.push_back(node.get());
  }
}

bool is_getattr_with_literal(const source::Call& call, const NameResolver& names) {
  return call.args.size() >= 2 && string_literal(call.args[1].get()) &&
         names.resolve(*call.func) == "builtins.getattr";
}

std::string spelling_at(const source::Expr& expr, int depth) {
  if (depth > kMaxSpellingDepth) {
    return "...";
  }
  if (const auto* name = source::node_cast<source::Name>(expr)) {
    return name->id;
  }
  if (const auto* attribute = source::node_cast<source::Attribute>(expr)) {
    const bool grouped = attribute->value->kind() == source::NodeKind::binary_op;  // (x * y).to
    const std::string object = spelling_at(*attribute->value, depth + 1);
    return (grouped ? "(" + object + ")" : object) + "." + attribute->attr;
  }
  if (const auto* call = source::node_cast<source::Call>(expr)) {
    const std::string callee = spelling_at(*call->func, depth + 1);
    const auto literal = call->args.size() == 2 ? string_literal(call->args[1].get()) : std::nullopt;
    if (callee == "getattr" && literal) {
      return "getattr(" + spelling_at(*call->args[0], depth + 1) + ", \"" + *literal + "\")";
    }
    return callee + (call->args.empty() && call->keywords.empty() ? "()" : "(...)");
  }
  if (const auto* subscript = source::node_cast<source::Subscript>(expr)) {
    return spelling_at(*subscript->value, depth + 1) + "[...]";
  }
  if (const auto* binary = source::node_cast<source::BinOp>(expr)) {
    return spelling_at(*binary->left, depth + 1) + " " + std::string(source::to_string(binary->op)) + " " +
           spelling_at(*binary->right, depth + 1);
  }
  if (source::node_cast<source::StringLiteral>(expr) != nullptr) {
    return "\"...\"";
  }
  return "<expression>";
}

}  // namespace

ResolverHandle::ResolverHandle(const AnalysisContext& context) : shared_(context.names) {
  if (shared_ == nullptr) {
    own_.emplace(context.module);
  }
}

std::vector<FunctionBody> reachable_bodies(const AnalysisContext& context, const NameResolver& names) {
  std::map<std::string, std::vector<std::size_t>, std::less<>> by_name;
  for (std::size_t scope = 1; scope < names.scope_count(); ++scope) {
    const Scope& info = names.scope(scope);
    if (info.kind == ScopeKind::function || info.kind == ScopeKind::lambda) {
      by_name[info.qualified_name].push_back(scope);
    }
  }
  std::vector<FunctionBody> bodies;
  std::set<std::string, std::less<>> done;
  for (const std::string& name : context.index.reachable_functions) {
    const auto found = by_name.find(name);
    if (found == by_name.end() || !done.insert(name).second) {
      continue;
    }
    for (const std::size_t scope : found->second) {
      bodies.push_back({names.scope(scope).node, scope, name});
    }
  }
  return bodies;
}

std::vector<FunctionBody> kernel_bodies(const AnalysisContext& context, const NameResolver& names) {
  std::vector<FunctionBody> bodies;
  for (const source::KernelInfo& kernel : context.index.kernels) {
    if (kernel.definition == nullptr) {
      continue;
    }
    const auto scope = names.scope_opened_by(*kernel.definition);
    const bool seen = std::any_of(bodies.begin(), bodies.end(),
                                  [&](const FunctionBody& body) { return body.node == kernel.definition; });
    if (scope && !seen) {
      bodies.push_back({kernel.definition, *scope, kernel.qualified_name});
    }
  }
  return bodies;
}

void walk_body(const Node& function, const std::function<void(const Node&)>& visit) {
  std::vector<const Node*> pending;
  if (const auto* def = source::node_cast<source::FunctionDef>(function)) {
    push_reversed(def->body, pending);
  } else if (const auto* lambda = source::node_cast<source::Lambda>(function)) {
    push_optional(lambda->body, pending);
  }
  while (!pending.empty()) {
    const Node* node = pending.back();
    pending.pop_back();
    visit(*node);
    if (const auto* def = source::node_cast<source::FunctionDef>(node)) {
      push_optional(def->returns, pending);
      push_reversed(def->params, pending);
      push_reversed(def->type_params, pending);
      push_reversed(def->decorators, pending);
    } else if (const auto* lambda = source::node_cast<source::Lambda>(node)) {
      push_reversed(lambda->params, pending);
    } else {
      source::push_children_reversed(*node, pending, [](const Node& child) { return &child; });
    }
  }
}

void walk_reachable(const AnalysisContext& context, const NameResolver& names,
                    const std::function<void(const Node&, const FunctionBody&)>& visit) {
  for (const FunctionBody& body : reachable_bodies(context, names)) {
    walk_body(*body.node, [&](const Node& node) { visit(node, body); });
  }
}

bool is_reference_root(const Node& node, const NameResolver& names) {
  switch (node.kind()) {
    case source::NodeKind::name:
    case source::NodeKind::attribute:
      break;
    case source::NodeKind::call:
      if (!is_getattr_with_literal(*source::node_cast<source::Call>(node), names)) {
        return false;
      }
      break;
    default:
      return false;
  }
  const Node* parent = names.parent(node);
  if (const auto* attribute = source::node_cast<source::Attribute>(parent)) {
    return attribute->value.get() != &node;
  }
  if (const auto* call = source::node_cast<source::Call>(parent)) {
    return !(call->args.size() >= 2 && call->args[0].get() == &node && is_getattr_with_literal(*call, names));
  }
  return true;
}

namespace {

bool contains(const source::ExprList& list, const Node* node) {
  return std::any_of(list.begin(), list.end(),
                     [node](const source::ExprPtr& item) { return item.get() == node; });
}

// Whether `node` is the target slot of `statement`.
bool is_target_of(const Node& statement, const Node* node) {
  switch (statement.kind()) {
    case source::NodeKind::assign:
      return contains(source::node_cast<source::Assign>(statement)->targets, node);
    case source::NodeKind::aug_assign:
      return source::node_cast<source::AugAssign>(statement)->target.get() == node;
    case source::NodeKind::ann_assign:
      return source::node_cast<source::AnnAssign>(statement)->target.get() == node;
    case source::NodeKind::delete_stmt:
      return contains(source::node_cast<source::Delete>(statement)->targets, node);
    case source::NodeKind::for_stmt:
      return source::node_cast<source::For>(statement)->target.get() == node;
    case source::NodeKind::comprehension:
      return source::node_cast<source::Comprehension>(statement)->target.get() == node;
    case source::NodeKind::with_item:
      return source::node_cast<source::WithItem>(statement)->optional_vars.get() == node;
    case source::NodeKind::named_expr:
      return source::node_cast<source::NamedExpr>(statement)->target.get() == node;
    default:
      return false;
  }
}

}  // namespace

const Node* assignment_of_target(const Node& node, const NameResolver& names) {
  const Node* current = &node;
  for (const Node* parent = names.parent(*current); parent != nullptr; parent = names.parent(*current)) {
    const auto* attribute = source::node_cast<source::Attribute>(parent);
    const auto* subscript = source::node_cast<source::Subscript>(parent);
    const bool climbs = (attribute != nullptr && attribute->value.get() == current) ||
                        (subscript != nullptr && subscript->value.get() == current) ||
                        parent->kind() == source::NodeKind::tuple ||
                        parent->kind() == source::NodeKind::list ||
                        parent->kind() == source::NodeKind::starred;
    if (!climbs) {
      return is_target_of(*parent, current) ? parent : nullptr;
    }
    current = parent;
  }
  return nullptr;
}

std::string spelling(const source::Expr& expr) { return spelling_at(expr, 0); }

std::string describe(const source::Expr& expr, std::string_view origin) {
  const std::string text = spelling(expr);
  if (origin.empty() || text == origin) {
    return "`" + text + "`";
  }
  return "`" + text + "` (" + std::string(origin) + ")";
}

bool in_table(std::span<const std::string_view> table, std::string_view value) {
  return std::find(table.begin(), table.end(), value) != table.end();
}

std::optional<std::string_view> module_match(std::string_view origin,
                                             std::span<const std::string_view> modules) {
  // A pass over the table: for the small tables of single rules (the forbidden-API scans use ModuleTable).
  const auto found = std::find_if(modules.begin(), modules.end(),
                                  [origin](std::string_view module) { return in_module(origin, module); });
  return found == modules.end() ? std::nullopt : std::optional<std::string_view>(*found);
}

std::vector<ForbiddenImport> forbidden_imports(const source::ModuleIndex& index, const ModuleTable& modules,
                                               const ModuleTable* exceptions) {
  const auto allowed = [exceptions](const std::string& origin) {
    return exceptions != nullptr && exceptions->match(origin).has_value();
  };
  std::vector<ForbiddenImport> found;
  const source::Stmt* previous = nullptr;
  for (const source::ImportInfo& info : index.imports) {
    if (info.statement == nullptr || info.statement == previous) {
      continue;  // `import a, b` is one statement listed once per module
    }
    previous = info.statement;
    ForbiddenImport entry;
    entry.statement = info.statement;
    const auto add = [&entry](std::string_view match) {
      if (std::find(entry.modules.begin(), entry.modules.end(), match) == entry.modules.end()) {
        entry.modules.emplace_back(match);
      }
    };
    if (const auto* import = source::node_cast<source::Import>(info.statement)) {
      for (const auto& alias : import->names) {
        if (const auto match = modules.match(alias->name); match && !allowed(alias->name)) {
          add(*match);
        }
      }
    } else if (const auto* import_from = source::node_cast<source::ImportFrom>(info.statement);
               import_from != nullptr && import_from->level == 0) {
      for (const auto& alias : import_from->names) {
        const std::string origin = import_from->module + "." + alias->name;
        if (allowed(origin)) {
          continue;  // an allowed member of a forbidden module
        }
        if (const auto match = modules.match(import_from->module)) {
          add(*match);
        }
        if (const auto match = modules.match(origin)) {
          add(*match);
        }
      }
    }
    if (!entry.modules.empty()) {
      found.push_back(std::move(entry));
    }
  }
  return found;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) {
    text += (i == 0 ? "`" : (i + 1 == items.size() ? " and `" : ", `")) + items[i] + "`";
  }
  return text;
}

void FindingSink::add(Severity severity, std::string message, source::SourceLocation location) {
  if (locations_.insert({location.line, location.column}).second) {
    findings_.push_back({std::string(rule_id_), severity, std::move(message), location});
  }
}

std::vector<ReadReference> read_references(const source::Module& module, const NameResolver& names) {
  std::vector<ReadReference> references;
  source::walk(module, [&](const Node& node) {
    if (is_reference_root(node, names) && assignment_of_target(node, names) == nullptr) {
      const auto& expr = source::as_expr(node);
      references.push_back({&expr, names.resolve_with_import(expr)});
    }
    return source::WalkAction::visit_children;
  });
  return references;
}

void scan_forbidden_api(const AnalysisContext& context, const NameResolver& names, const ForbiddenApi& api,
                        const std::function<void(const ForbiddenImport&)>& report_import,
                        const std::function<void(const source::Expr&, const Resolved&)>& report_use) {
  for (const ForbiddenImport& import : forbidden_imports(context.index, api.modules, &api.exceptions)) {
    report_import(import);
  }
  std::optional<std::vector<ReadReference>> own;
  const auto& references = context.references != nullptr
                               ? *context.references
                               : own.emplace(read_references(context.module, names));
  for (const auto& [expr, resolved] : references) {
    // What an allowed call returns is allowed too (`buf = _empty_strided_cuda(...)`, then `buf`).
    const std::string_view callee = std::string_view(resolved.origin).substr(0, resolved.origin.find('('));
    if (resolved.origin.empty() || api.exceptions.match(callee)) {
      continue;
    }
    const bool through_reported_import =
        !resolved.import_origin.empty() && api.modules.match(resolved.import_origin);
    const bool in_member = api.members.match(resolved.origin).has_value();
    const bool in_module_reached_otherwise =
        !resolved.import_origin.empty() && api.modules.match(resolved.origin).has_value();
    if (!through_reported_import && (in_member || in_module_reached_otherwise)) {
      report_use(*expr, resolved);
    }
  }
}

std::string import_subject(const ForbiddenImport& import) {
  return "import of " + quoted_list(import.modules);
}

}  // namespace kforge::rules
