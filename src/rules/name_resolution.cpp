#include "rules/name_resolution.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "source/module_index.hpp"
#include "source/unicode_normalization.hpp"

namespace kforge::rules {
namespace {

using source::Expr;
using source::Node;

// Bounds one resolution query (alias hops, calls in chains); real code needs a handful of steps.
// Resolved names are memoised, so hostile alias graphs cost at most this much per reference.
constexpr int kMaxQuerySteps = 64;
// Bounds values_of() through alias chains and class hierarchies.
constexpr int kMaxValueDepth = 16;
constexpr std::size_t kMaxHierarchySize = 64;
// A name or attribute with more possible values than this is not honest code (a rebinding in a
// loop is one value); analysis gives up rather than walking them at every reference.
constexpr std::size_t kMaxValuesPerName = 1024;

// Python's builtin functions, types and constants that a candidate may call by bare name.
constexpr std::array<std::string_view, 79> kBuiltinNames = {"__build_class__",
                                                            "__import__",
                                                            "abs",
                                                            "aiter",
                                                            "all",
                                                            "anext",
                                                            "any",
                                                            "ascii",
                                                            "bin",
                                                            "bool",
                                                            "breakpoint",
                                                            "bytearray",
                                                            "bytes",
                                                            "callable",
                                                            "chr",
                                                            "classmethod",
                                                            "compile",
                                                            "complex",
                                                            "copyright",
                                                            "credits",
                                                            "delattr",
                                                            "dict",
                                                            "dir",
                                                            "divmod",
                                                            "enumerate",
                                                            "eval",
                                                            "exec",
                                                            "exit",
                                                            "filter",
                                                            "float",
                                                            "format",
                                                            "frozenset",
                                                            "getattr",
                                                            "globals",
                                                            "hasattr",
                                                            "hash",
                                                            "help",
                                                            "hex",
                                                            "id",
                                                            "input",
                                                            "int",
                                                            "isinstance",
                                                            "issubclass",
                                                            "iter",
                                                            "len",
                                                            "license",
                                                            "list",
                                                            "locals",
                                                            "map",
                                                            "max",
                                                            "memoryview",
                                                            "min",
                                                            "next",
                                                            "object",
                                                            "oct",
                                                            "open",
                                                            "ord",
                                                            "pow",
                                                            "print",
                                                            "property",
                                                            "quit",
                                                            "range",
                                                            "repr",
                                                            "reversed",
                                                            "round",
                                                            "set",
                                                            "setattr",
                                                            "slice",
                                                            "sorted",
                                                            "staticmethod",
                                                            "str",
                                                            "sum",
                                                            "super",
                                                            "tuple",
                                                            "type",
                                                            "vars",
                                                            "zip",
                                                            "Exception",
                                                            "BaseException"};

bool is_builtin_name(std::string_view name) {
  return std::find(kBuiltinNames.begin(), kBuiltinNames.end(), name) != kBuiltinNames.end();
}

bool is_static_method(const source::FunctionDef& def) {
  return std::any_of(def.decorators.begin(), def.decorators.end(), [](const source::ExprPtr& decorator) {
    return source::dotted_name(*decorator) == "staticmethod";
  });
}

struct Pending {
  const Node* node;
  std::size_t scope;
  const Node* parent;
};

}  // namespace

// State of one resolve() call: the names and members being resolved (a cycle ends there), a step
// budget that bounds the recursion, and whether this part of the query was cut short by either.
struct NameResolver::Query {
  std::vector<std::pair<std::size_t, std::string>> in_progress;
  int steps = 0;
  bool truncated = false;

  bool step() {
    if (++steps > kMaxQuerySteps) {
      truncated = true;
      return false;
    }
    return true;
  }
};

namespace {

// Builds the scope tree in one iterative pass over the module.
class ScopeBuilder {
 public:
  ScopeBuilder(std::vector<Scope>& scopes, std::unordered_map<const Node*, std::size_t>& scope_of,
               std::unordered_map<const Node*, std::size_t>& opened,
               std::unordered_map<const Node*, const Node*>& parent, std::vector<std::string>& star_imports)
      : scopes_(scopes), scope_of_(scope_of), opened_(opened), parent_(parent), star_imports_(star_imports) {}

  void build(const source::Module& module) {
    Scope root;
    root.node = &module;
    scopes_.push_back(std::move(root));
    opened_[&module] = 0;
    scope_of_[&module] = 0;
    std::vector<Pending> pending;
    push_all(module.body, 0, &module, pending);
    while (!pending.empty()) {
      const Pending next = pending.back();
      pending.pop_back();
      parent_[next.node] = next.parent;
      scope_of_[next.node] = next.scope;
      visit(*next.node, next.scope, pending);
    }
  }

 private:
  template <class T>
  static void push_all(const std::vector<std::unique_ptr<T>>& nodes, std::size_t scope, const Node* parent,
                       std::vector<Pending>& pending) {
    std::for_each(nodes.rbegin(), nodes.rend(), [&](const std::unique_ptr<T>& node) {
      if (node) {
        pending.push_back({node.get(), scope, parent});
      }
    });
  }

  template <class T>
  static void push_one(const std::unique_ptr<T>& node, std::size_t scope, const Node* parent,
                       std::vector<Pending>& pending) {
    if (node) {
      pending.push_back({node.get(), scope, parent});
    }
  }

  std::string qualify(std::size_t outer, std::string_view name) const {
    const Scope& scope = scopes_[outer];
    switch (scope.kind) {
      case ScopeKind::module:
        return std::string(name);
      case ScopeKind::class_body:
        return scope.qualified_name + "." + std::string(name);
      default:
        return scope.qualified_name + ".<locals>." + std::string(name);
    }
  }

  std::size_t open_scope(ScopeKind kind, const Node& node, std::string_view name, std::size_t outer) {
    Scope scope;
    scope.kind = kind;
    scope.node = &node;
    scope.parent = outer;
    scope.qualified_name = qualify(outer, name);
    if (scopes_[outer].kind != ScopeKind::class_body) {
      scope.method_class = scopes_[outer].method_class;
      scope.self_name = scopes_[outer].self_name;
    }
    scopes_.push_back(std::move(scope));
    opened_[&node] = scopes_.size() - 1;
    return scopes_.size() - 1;
  }

  void visit(const Node& node, std::size_t scope, std::vector<Pending>& pending) {
    if (const auto* def = source::node_cast<source::FunctionDef>(node)) {
      bind(def->name, scope);
      const std::size_t inner = open_scope(ScopeKind::function, node, def->name, scope);
      scopes_[scope].functions[def->name] = inner;
      if (scopes_[scope].kind == ScopeKind::class_body) {
        scopes_[inner].method_class = scope;
        scopes_[inner].self_name =
            !def->params.empty() && !is_static_method(*def) ? def->params.front()->name : std::string();
      }
      bind_parameters(def->params, inner);
      push_all(def->body, inner, &node, pending);
      push_one(def->returns, scope, &node, pending);
      push_all(def->params, scope, &node, pending);
      push_all(def->type_params, scope, &node, pending);
      push_all(def->decorators, scope, &node, pending);
    } else if (const auto* lambda = source::node_cast<source::Lambda>(node)) {
      const std::size_t inner = open_scope(ScopeKind::lambda, node, "<lambda>", scope);
      bind_parameters(lambda->params, inner);
      push_one(lambda->body, inner, &node, pending);
      push_all(lambda->params, scope, &node, pending);
    } else if (const auto* class_def = source::node_cast<source::ClassDef>(node)) {
      bind(class_def->name, scope);
      const std::size_t inner = open_scope(ScopeKind::class_body, node, class_def->name, scope);
      scopes_[scope].classes[class_def->name] = inner;
      push_all(class_def->body, inner, &node, pending);
      push_all(class_def->keywords, scope, &node, pending);
      push_all(class_def->bases, scope, &node, pending);
      push_all(class_def->decorators, scope, &node, pending);
    } else {
      record(node, scope);
      source::push_children_reversed(node, pending, [scope, &node](const Node& child) {
        return Pending{&child, scope, &node};
      });
    }
  }

  void bind_parameters(const source::ParameterList& params, std::size_t scope) {
    for (const auto& param : params) {
      bind(param->name, scope);
    }
  }

  // The scope that a binding of `name` in `scope` lands in (`global` names live in the module).
  std::optional<std::size_t> binding_scope(const std::string& name, std::size_t scope) const {
    if (scopes_[scope].globals.contains(name)) {
      return 0;
    }
    if (scopes_[scope].nonlocals.contains(name)) {
      return std::nullopt;  // bound in an enclosing function, which already records it
    }
    return scope;
  }

  void bind(const std::string& name, std::size_t scope) {
    if (const auto target = binding_scope(name, scope)) {
      scopes_[*target].bound.insert(name);
    }
  }

  void bind_value(const std::string& name, const Expr* value, std::size_t scope) {
    if (const auto target = binding_scope(name, scope)) {
      scopes_[*target].bound.insert(name);
      if (value != nullptr) {
        scopes_[*target].values[name].push_back(value);
      }
    }
  }

  void bind_target(const Expr& target, const Expr* value, std::size_t scope) {
    if (const auto* name = source::node_cast<source::Name>(target)) {
      bind_value(name->id, value, scope);
    } else if (const auto* starred = source::node_cast<source::Starred>(target)) {
      bind_target(*starred->value, nullptr, scope);
    } else if (target.kind() == source::NodeKind::tuple || target.kind() == source::NodeKind::list) {
      bind_sequence(target, value, scope);
    } else if (const auto* attribute = source::node_cast<source::Attribute>(target)) {
      const auto* receiver = source::node_cast<source::Name>(attribute->value.get());
      const Scope& current = scopes_[scope];
      if (receiver != nullptr && value != nullptr && current.method_class && !current.self_name.empty() &&
          receiver->id == current.self_name) {
        scopes_[*current.method_class].instance_attributes[attribute->attr].emplace_back(value, scope);
      }
    }
  }

  static const source::ExprList* elements_of(const Expr* expr) {
    if (const auto* tuple = source::node_cast<source::Tuple>(expr)) {
      return &tuple->elements;
    }
    if (const auto* list = source::node_cast<source::List>(expr)) {
      return &list->elements;
    }
    return nullptr;
  }

  // `a, b = x, y` pairs the targets with the values; any other unpacking binds without values.
  void bind_sequence(const Expr& target, const Expr* value, std::size_t scope) {
    const source::ExprList* targets = elements_of(&target);
    const source::ExprList* values = elements_of(value);
    const bool paired = values != nullptr && values->size() == targets->size();
    for (std::size_t i = 0; i < targets->size(); ++i) {
      bind_target(*(*targets)[i], paired ? (*values)[i].get() : nullptr, scope);
    }
  }

  // A loop target takes the elements of `iterable`.
  void bind_elements(const Expr& target, const Expr& iterable, std::size_t scope) {
    if (const auto* name = source::node_cast<source::Name>(target)) {
      if (const auto found = binding_scope(name->id, scope)) {
        scopes_[*found].bound.insert(name->id);
        scopes_[*found].elements[name->id].push_back(&iterable);
      }
      return;
    }
    bind_target(target, nullptr, scope);
  }

  void record_import(const source::Import& node, std::size_t scope) {
    for (const auto& alias : node.names) {
      const std::string root = alias->name.substr(0, alias->name.find('.'));
      const std::string& bound = alias->asname.empty() ? root : alias->asname;
      const std::string origin = alias->asname.empty() ? root : alias->name;
      if (const auto target = binding_scope(bound, scope)) {
        scopes_[*target].imports[bound] = origin;
        scopes_[*target].bound.insert(bound);
      }
    }
  }

  void record_import_from(const source::ImportFrom& node, std::size_t scope) {
    const std::string prefix = std::string(static_cast<std::size_t>(node.level), '.') + node.module;
    for (const auto& alias : node.names) {
      if (alias->name == "*") {
        star_imports_.push_back(prefix);
        continue;
      }
      const std::string& bound = alias->asname.empty() ? alias->name : alias->asname;
      const std::string origin =
          prefix.empty() || prefix.back() == '.' ? prefix + alias->name : prefix + "." + alias->name;
      if (const auto target = binding_scope(bound, scope)) {
        scopes_[*target].imports[bound] = origin;
        scopes_[*target].bound.insert(bound);
      }
    }
  }

  void record(const Node& node, std::size_t scope) {
    switch (node.kind()) {
      case source::NodeKind::assign: {
        const auto& assign = *source::node_cast<source::Assign>(node);
        for (const auto& target : assign.targets) {
          bind_target(*target, assign.value.get(), scope);
        }
        break;
      }
      case source::NodeKind::ann_assign: {
        const auto& assign = *source::node_cast<source::AnnAssign>(node);
        bind_target(*assign.target, assign.value.get(), scope);
        break;
      }
      case source::NodeKind::aug_assign:
        bind_target(*source::node_cast<source::AugAssign>(node)->target, nullptr, scope);
        break;
      case source::NodeKind::named_expr: {
        const auto& named = *source::node_cast<source::NamedExpr>(node);
        bind_target(*named.target, named.value.get(), scope);
        break;
      }
      case source::NodeKind::for_stmt: {
        const auto& loop = *source::node_cast<source::For>(node);
        bind_elements(*loop.target, *loop.iter, scope);
        break;
      }
      case source::NodeKind::comprehension: {
        const auto& comprehension = *source::node_cast<source::Comprehension>(node);
        bind_elements(*comprehension.target, *comprehension.iter, scope);
        break;
      }
      case source::NodeKind::with_item: {
        const auto& item = *source::node_cast<source::WithItem>(node);
        if (item.optional_vars) {
          bind_target(*item.optional_vars, item.context_expr.get(), scope);
        }
        break;
      }
      case source::NodeKind::except_handler: {
        const auto& handler = *source::node_cast<source::ExceptHandler>(node);
        if (!handler.name.empty()) {
          bind(handler.name, scope);
        }
        break;
      }
      case source::NodeKind::match_as: {
        const auto& capture = *source::node_cast<source::MatchAs>(node);
        if (!capture.name.empty()) {
          bind(capture.name, scope);
        }
        break;
      }
      case source::NodeKind::delete_stmt:
        for (const auto& target : source::node_cast<source::Delete>(node)->targets) {
          bind_target(*target, nullptr, scope);
        }
        break;
      case source::NodeKind::import_stmt:
        record_import(*source::node_cast<source::Import>(node), scope);
        break;
      case source::NodeKind::import_from:
        record_import_from(*source::node_cast<source::ImportFrom>(node), scope);
        break;
      case source::NodeKind::global_stmt:
        for (const std::string& name : source::node_cast<source::Global>(node)->names) {
          scopes_[scope].globals.insert(name);
        }
        break;
      case source::NodeKind::nonlocal_stmt:
        for (const std::string& name : source::node_cast<source::Nonlocal>(node)->names) {
          scopes_[scope].nonlocals.insert(name);
        }
        break;
      default:
        break;
    }
  }

  std::vector<Scope>& scopes_;
  std::unordered_map<const Node*, std::size_t>& scope_of_;
  std::unordered_map<const Node*, std::size_t>& opened_;
  std::unordered_map<const Node*, const Node*>& parent_;
  std::vector<std::string>& star_imports_;
};

}  // namespace

NameResolver::NameResolver(const source::Module& module) { build(module); }

void NameResolver::build(const source::Module& module) {
  ScopeBuilder(scopes_, scope_of_, opened_, parent_, star_imports_).build(module);
  cache_.resize(scopes_.size());
  // Warm the cache in source order, the order Python binds names in: each alias of a chain
  // (`a1 = a0`, `a2 = a1`...) then resolves from the previous one, so any chain depth resolves
  // within the per-query budget, and later queries are lookups.
  source::walk(module, [this](const Node& node) {
    if (const auto* name = source::node_cast<source::Name>(node)) {
      static_cast<void>(resolve(*name));
    }
    return source::WalkAction::visit_children;
  });
}

std::size_t NameResolver::scope_of(const Node& node) const {
  const auto found = scope_of_.find(&node);
  return found == scope_of_.end() ? 0 : found->second;
}

std::optional<std::size_t> NameResolver::scope_opened_by(const Node& node) const {
  const auto found = opened_.find(&node);
  return found == opened_.end() ? std::nullopt : std::optional<std::size_t>(found->second);
}

const Node* NameResolver::parent(const Node& node) const {
  const auto found = parent_.find(&node);
  return found == parent_.end() ? nullptr : found->second;
}

// Looks `name` up from `scope` as Python does: the scope itself, then the enclosing function
// scopes and the module (class bodies do not enclose the functions defined in them).
Binding NameResolver::binding_in(const std::string& name, std::size_t scope) const {
  std::optional<std::size_t> next = scope;
  for (bool first = true; next; first = false) {
    std::size_t candidate = *next;
    next = scopes_[candidate].parent;
    if (!first && scopes_[candidate].kind == ScopeKind::class_body) {
      continue;
    }
    if (scopes_[candidate].globals.contains(name)) {
      candidate = 0;
    } else if (scopes_[candidate].nonlocals.contains(name)) {
      continue;
    }
    const Scope& current = scopes_[candidate];
    if (current.imports.contains(name)) {
      return {BindingKind::import, candidate};
    }
    if (current.bound.contains(name)) {
      return {BindingKind::local, candidate};
    }
    if (candidate == 0) {
      break;
    }
  }
  if (!star_imports_.empty()) {
    return {BindingKind::star_import, 0};
  }
  return {is_builtin_name(name) ? BindingKind::builtin : BindingKind::unbound, std::nullopt};
}

template <class Compute>
Resolved NameResolver::memoised(std::size_t scope, std::string key, Query& query,
                                const Compute& compute) const {
  auto& cache = cache_[scope];
  if (const auto found = cache.find(key); found != cache.end()) {
    return found->second;
  }
  std::pair<std::size_t, std::string> entry{scope, std::move(key)};
  if (std::find(query.in_progress.begin(), query.in_progress.end(), entry) != query.in_progress.end()) {
    query.truncated = true;  // a cycle: the outer resolution of this entry goes on
    return {};
  }
  // A root entry (nothing in progress) is computed from a fixed state, with the whole budget, so
  // its answer is the same whoever asks: it is cached even when a cycle or the budget cut it
  // short. Inner entries are cached only when complete, since a cut-short answer depends on
  // where the query started.
  const bool root = query.in_progress.empty();
  const int outer_steps = query.steps;
  const bool outer_truncated = query.truncated;
  if (root) {
    query.steps = 0;
  }
  query.truncated = false;
  query.in_progress.push_back(entry);
  Resolved result = compute();
  query.in_progress.pop_back();
  if (root || !query.truncated) {
    cache.emplace(std::move(entry.second), result);
  }
  query.truncated = query.truncated || outer_truncated;
  if (root) {
    query.steps = outer_steps;
  }
  return result;
}

Binding NameResolver::binding_of(const source::Name& name) const {
  return binding_in(name.id, scope_of(name));
}

std::optional<std::size_t> NameResolver::receiver_class(const Expr& expr, std::size_t scope) const {
  const auto* name = source::node_cast<source::Name>(expr);
  const Scope& current = scopes_[scope];
  if (name == nullptr || !current.method_class || current.self_name.empty() ||
      name->id != current.self_name) {
    return std::nullopt;
  }
  return current.method_class;
}

Resolved NameResolver::resolve_with_import(const Expr& expr) const {
  if (const auto found = expression_cache_.find(&expr); found != expression_cache_.end()) {
    return found->second;
  }
  Query query;
  Resolved resolved = resolve_in(expr, scope_of(expr), query);
  if (!query.truncated) {
    expression_cache_.emplace(&expr, resolved);
  }
  return resolved;
}

Resolved NameResolver::resolve_name(const std::string& name, std::size_t scope, Query& query) const {
  const Binding binding = binding_in(name, scope);
  switch (binding.kind) {
    case BindingKind::import: {
      const std::string& origin = scopes_[*binding.scope].imports.find(name)->second;
      return {origin, origin};
    }
    case BindingKind::local:
      return memoised(*binding.scope, name, query, [&]() -> Resolved {
        const Scope& owner = scopes_[*binding.scope];
        if (const auto found = owner.values.find(name); found != owner.values.end()) {
          for (const Expr* value : found->second) {
            Resolved resolved = resolve_in(*value, scope_of(*value), query);
            if (!resolved.origin.empty()) {
              return resolved;
            }
          }
        }
        return {};
      });
    case BindingKind::star_import: {
      // `from torch import *` wins over other star imports for the names both could provide.
      const auto torch_star =
          std::find_if(star_imports_.begin(), star_imports_.end(),
                       [](const std::string& module) { return in_module(module, "torch"); });
      const std::string& module = torch_star != star_imports_.end() ? *torch_star : star_imports_.back();
      if (is_builtin_name(name) && !in_module(module, "torch")) {
        return {"builtins." + name, ""};
      }
      return {module + "." + name, module};
    }
    case BindingKind::builtin:
      return {"builtins." + name, ""};
    case BindingKind::unbound:
      break;
  }
  if (name == "__builtins__") {
    return {"builtins", ""};
  }
  return {};
}

Resolved NameResolver::resolve_member(std::size_t class_scope, const std::string& member,
                                      Query& query) const {
  // Members are keyed ".name" next to the class scope's own names.
  return memoised(class_scope, "." + member, query,
                  [&]() { return resolve_member_uncached(class_scope, member, query); });
}

Resolved NameResolver::resolve_member_uncached(std::size_t class_scope, const std::string& member,
                                               Query& query) const {
  for (const std::size_t owner : class_hierarchy(class_scope)) {
    const Scope& scope = scopes_[owner];
    if (scope.functions.contains(member) || scope.classes.contains(member)) {
      return {};  // the class's own method or nested class
    }
    if (const auto found = scope.instance_attributes.find(member); found != scope.instance_attributes.end()) {
      for (const auto& [value, value_scope] : found->second) {
        Resolved resolved = resolve_in(*value, value_scope, query);
        if (!resolved.origin.empty()) {
          return resolved;
        }
      }
    }
    if (const auto found = scope.values.find(member); found != scope.values.end()) {
      for (const Expr* value : found->second) {
        Resolved resolved = resolve_in(*value, owner, query);
        if (!resolved.origin.empty()) {
          return resolved;
        }
      }
    }
    if (const auto found = scope.imports.find(member); found != scope.imports.end()) {
      return {found->second, found->second};
    }
  }
  return {};
}

Resolved NameResolver::resolve_in(const Expr& expr, std::size_t scope, Query& query) const {
  if (!query.step()) {
    return {};
  }
  // Flatten the attribute chain iteratively: a.b.c -> base `a`, parts {c, b}.
  std::vector<const std::string*> parts;
  const Expr* base = &expr;
  while (const auto* attribute = source::node_cast<source::Attribute>(base)) {
    parts.push_back(&attribute->attr);
    base = attribute->value.get();
  }
  Resolved resolved;
  if (const auto class_scope = !parts.empty() ? receiver_class(*base, scope) : std::nullopt) {
    resolved = resolve_member(*class_scope, *parts.back(), query);
    parts.pop_back();
  } else if (const auto* name = source::node_cast<source::Name>(base)) {
    resolved = resolve_name(name->id, scope, query);
  } else if (const auto* call = source::node_cast<source::Call>(base)) {
    const Resolved callee = resolve_in(*call->func, scope, query);
    const auto literal = call->args.size() >= 2 ? string_literal(call->args[1].get()) : std::nullopt;
    if (callee.origin == "builtins.getattr" && literal) {
      // getattr(obj, "name") is obj.name.
      const Expr& object = *call->args[0];
      if (const auto object_class = receiver_class(object, scope)) {
        resolved = resolve_member(*object_class, *literal, query);
      } else {
        resolved = resolve_in(object, scope, query);
        if (!resolved.origin.empty()) {
          resolved.origin += "." + *literal;
        }
      }
    } else if (!callee.origin.empty()) {
      resolved = {callee.origin + "()", callee.import_origin};
    }
  } else if (const auto* conditional = source::node_cast<source::IfExp>(base)) {
    resolved = resolve_in(*conditional->body, scope, query);
    if (resolved.origin.empty()) {
      resolved = resolve_in(*conditional->orelse, scope, query);
    }
  } else if (const auto* boolean = source::node_cast<source::BoolOp>(base)) {
    for (const auto& value : boolean->values) {
      resolved = resolve_in(*value, scope, query);
      if (!resolved.origin.empty()) {
        break;
      }
    }
  } else if (const auto* named = source::node_cast<source::NamedExpr>(base)) {
    resolved = resolve_in(*named->value, scope, query);
  }
  if (resolved.origin.empty()) {
    return {};
  }
  std::for_each(parts.rbegin(), parts.rend(), [&resolved](const std::string* part) {
    resolved.origin += '.';
    resolved.origin += *part;
  });
  return resolved;
}

std::vector<const Expr*> NameResolver::values_of(const Expr& expr) const {
  const std::size_t scope = scope_of(expr);
  const std::optional<std::pair<std::size_t, std::string>> key = values_key(expr, scope);
  if (key) {
    if (const auto found = values_cache_.find(*key); found != values_cache_.end()) {
      spend(found->second.size() + 1);  // the caller walks every value
      return found->second;
    }
  }
  std::set<const Expr*> seen;
  std::vector<const Expr*> out;
  collect_values(expr, scope, 0, seen, out);
  if (out.size() > kMaxValuesPerName) {
    throw source::IndexTooComplex("module too complex to analyse: a name or attribute takes more than " +
                                  std::to_string(kMaxValuesPerName) +
                                  " different values; assign it in one place (or in a loop)");
  }
  spend(out.size() + 1);
  if (key) {
    values_cache_.emplace(*key, out);
  }
  return out;
}

// The cache key of values_of(expr): what a Name is bound to, or the class member `self.attr`
// denotes, through any subscripts (`x[i]` holds what `x` holds). nullopt for other expressions.
std::optional<std::pair<std::size_t, std::string>> NameResolver::values_key(const Expr& expr,
                                                                            std::size_t scope) const {
  const Expr* base = &expr;
  while (const auto* subscript = source::node_cast<source::Subscript>(*base)) {
    base = subscript->value.get();
  }
  if (base != &expr) {
    return std::nullopt;  // a subscript adds a depth level, so it is not the same query as its base
  }
  if (const auto* name = source::node_cast<source::Name>(*base)) {
    const Binding binding = binding_in(name->id, scope);
    if (binding.kind == BindingKind::local) {
      return std::pair{*binding.scope, name->id};
    }
    return std::nullopt;
  }
  if (const auto* attribute = source::node_cast<source::Attribute>(*base)) {
    if (const auto class_scope = receiver_class(*attribute->value, scope)) {
      return std::pair{*class_scope, "." + attribute->attr};
    }
  }
  return std::nullopt;
}

void NameResolver::spend(std::size_t units) const {
  work_ += units;
  if (work_ > kMaxResolverWork) {
    throw source::IndexTooComplex("module too complex to analyse: resolving its names takes more than " +
                                  std::to_string(kMaxResolverWork) +
                                  " steps; simplify the aliasing of names, classes and attributes");
  }
}

void NameResolver::add_member_values(std::size_t class_scope, const std::string& member, int depth,
                                     std::set<const Expr*>& seen, std::vector<const Expr*>& out) const {
  const auto add = [&](const Expr* value) {
    if (seen.insert(value).second) {
      out.push_back(value);
      collect_values(*value, scope_of(*value), depth + 1, seen, out);
    }
  };
  for (const std::size_t owner : class_hierarchy(class_scope)) {
    const Scope& scope = scopes_[owner];
    if (const auto found = scope.instance_attributes.find(member); found != scope.instance_attributes.end()) {
      for (const auto& site : found->second) {
        add(site.first);
      }
    }
    if (const auto found = scope.values.find(member); found != scope.values.end()) {
      std::for_each(found->second.begin(), found->second.end(), add);
    }
  }
}

void NameResolver::collect_values(const Expr& expr, std::size_t scope, int depth, std::set<const Expr*>& seen,
                                  std::vector<const Expr*>& out) const {
  if (depth > kMaxValueDepth) {
    return;
  }
  spend(1);
  const auto add = [&](const Expr* value) {
    if (seen.insert(value).second) {
      out.push_back(value);
      collect_values(*value, scope_of(*value), depth + 1, seen, out);
    }
  };
  if (const auto* name = source::node_cast<source::Name>(expr)) {
    const Binding binding = binding_in(name->id, scope);
    if (binding.kind != BindingKind::local) {
      return;
    }
    const Scope& owner = scopes_[*binding.scope];
    for (const auto* table : {&owner.values, &owner.elements}) {
      if (const auto found = table->find(name->id); found != table->end()) {
        std::for_each(found->second.begin(), found->second.end(), add);
      }
    }
  } else if (const auto* attribute = source::node_cast<source::Attribute>(expr)) {
    if (const auto class_scope = receiver_class(*attribute->value, scope)) {
      add_member_values(*class_scope, attribute->attr, depth, seen, out);
    }
  } else if (const auto* subscript = source::node_cast<source::Subscript>(expr)) {
    collect_values(*subscript->value, scope, depth + 1, seen, out);
  } else if (const auto* call = source::node_cast<source::Call>(expr)) {
    const auto literal = call->args.size() >= 2 ? string_literal(call->args[1].get()) : std::nullopt;
    const auto* callee = source::node_cast<source::Name>(call->func.get());
    if (callee != nullptr && callee->id == "getattr" && literal) {
      if (const auto class_scope = receiver_class(*call->args[0], scope)) {
        add_member_values(*class_scope, *literal, depth, seen, out);
      }
    }
  } else if (const auto* conditional = source::node_cast<source::IfExp>(expr)) {
    add(conditional->body.get());
    add(conditional->orelse.get());
  }
}

std::optional<std::size_t> NameResolver::class_named(const Expr& expr) const {
  const auto* name = source::node_cast<source::Name>(expr);
  if (name == nullptr) {
    return std::nullopt;
  }
  const Binding binding = binding_of(*name);
  if (binding.kind != BindingKind::local) {
    return std::nullopt;
  }
  const Scope& owner = scopes_[*binding.scope];
  const auto found = owner.classes.find(name->id);
  return found == owner.classes.end() ? std::nullopt : std::optional<std::size_t>(found->second);
}

std::vector<std::size_t> NameResolver::class_hierarchy(std::size_t class_scope) const {
  if (const auto found = hierarchy_cache_.find(class_scope); found != hierarchy_cache_.end()) {
    spend(found->second.size());
    return found->second;
  }
  std::vector<std::size_t> hierarchy{class_scope};
  for (std::size_t i = 0; i < hierarchy.size() && hierarchy.size() < kMaxHierarchySize; ++i) {
    const auto* class_def = source::node_cast<source::ClassDef>(scopes_[hierarchy[i]].node);
    if (class_def == nullptr) {
      continue;
    }
    spend(class_def->bases.size());
    for (const auto& base : class_def->bases) {
      const auto found = class_named(*base);
      if (found && std::find(hierarchy.begin(), hierarchy.end(), *found) == hierarchy.end()) {
        hierarchy.push_back(*found);
      }
    }
  }
  hierarchy_cache_.emplace(class_scope, hierarchy);
  return hierarchy;
}

std::optional<std::size_t> NameResolver::find_method(std::size_t class_scope, std::string_view name) const {
  for (const std::size_t owner : class_hierarchy(class_scope)) {
    if (const auto found = scopes_[owner].functions.find(name); found != scopes_[owner].functions.end()) {
      return found->second;
    }
  }
  return std::nullopt;
}

std::vector<std::size_t> NameResolver::callees(const source::Call& call) const {
  std::vector<std::size_t> out;
  const auto add_method = [&](std::size_t class_scope, std::string_view name) {
    if (const auto method = find_method(class_scope, name)) {
      out.push_back(*method);
    }
  };
  const std::size_t scope = scope_of(call);
  if (const auto* name = source::node_cast<source::Name>(call.func.get())) {
    const Binding binding = binding_of(*name);
    if (binding.kind != BindingKind::local) {
      return out;
    }
    const Scope& owner = scopes_[*binding.scope];
    if (const auto found = owner.functions.find(name->id); found != owner.functions.end()) {
      out.push_back(found->second);
    }
    if (const auto found = owner.classes.find(name->id); found != owner.classes.end()) {
      add_method(found->second, "__init__");
    }
  } else if (const auto* attribute = source::node_cast<source::Attribute>(call.func.get())) {
    const Expr& receiver = *attribute->value;
    if (const auto class_scope = receiver_class(receiver, scope)) {
      add_method(*class_scope, attribute->attr);
    } else if (const auto named = class_named(receiver)) {
      add_method(*named, attribute->attr);
    }
    for (const Expr* value : values_of(receiver)) {
      if (const auto* construction = source::node_cast<source::Call>(value)) {
        if (const auto instance_class = class_named(*construction->func)) {
          add_method(*instance_class, attribute->attr);
        }
      }
    }
  }
  return out;
}

bool in_module(std::string_view origin, std::string_view module) {
  // The boundary test first: most candidates fail it without a string comparison.
  return origin.size() >= module.size() && (origin.size() == module.size() || origin[module.size()] == '.') &&
         origin.starts_with(module);
}

bool is_static_origin(std::string_view origin) {
  return !origin.empty() && origin.find("()") == std::string_view::npos;
}

std::string_view last_component(std::string_view origin) {
  const std::size_t dot = origin.rfind('.');
  return dot == std::string_view::npos ? origin : origin.substr(dot + 1);
}

std::optional<std::string> string_literal(const Expr* expr) {
  const auto* literal = source::node_cast<source::StringLiteral>(expr);
  if (literal == nullptr || literal->is_fstring || literal->is_bytes) {
    return std::nullopt;
  }
  // Read as a name (getattr, import_module, __import__): compared in NFKC like an identifier, so a
  // fullwidth spelling is seen as the name it stands for.
  return source::nfkc(literal->value);
}

}  // namespace kforge::rules
