#include "source/module_index.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

namespace kforge::source {
namespace {

// Bounds base-class chains and import/alias rewriting of dotted names.
constexpr int kMaxResolutionDepth = 16;
// Bounds the classes collected along a base-class hierarchy.
constexpr std::size_t kMaxHierarchySize = 64;
// Bounds the kernels recorded for one launch site (the first ones by name are kept): a site that
// picks from a tuple of a thousand kernels, repeated at thousands of sites, would otherwise record
// millions of launches.
constexpr std::size_t kMaxKernelsPerLaunch = 64;

// Sorts, removes duplicates and keeps at most kMaxKernelsPerLaunch names.
void normalize_launched(std::vector<std::string>& kernels) {
  std::sort(kernels.begin(), kernels.end());
  kernels.erase(std::unique(kernels.begin(), kernels.end()), kernels.end());
  if (kernels.size() > kMaxKernelsPerLaunch) {
    kernels.resize(kMaxKernelsPerLaunch);
  }
}

constexpr std::array<std::string_view, 11> kBuiltinTypeNames = {
    "dict", "list", "tuple", "set", "frozenset", "type", "int", "float", "str", "bytes", "object"};

// Attributes of a registered parameter or buffer, or of any tensor: reading `self.a.b.weight` goes through
// nn.Module.__getattr__ and calls no code of the objects on the way.
constexpr std::array<std::string_view, 8> kTensorReadAttributes = {
    "weight", "bias", "running_mean", "running_var", "shape", "dtype", "device", "data"};

enum class ScopeKind : std::uint8_t { module, class_body, function, lambda };

// A value assigned to a name, with the scope in which the value expression is evaluated.
struct ValueSite {
  const Expr* value;
  std::size_t scope;
};

struct Scope {
  ScopeKind kind = ScopeKind::module;
  const Node* node = nullptr;
  std::string name;
  std::string qualified_name;
  std::optional<std::size_t> parent;
  std::optional<std::size_t> method_class;  // class scope whose method encloses this scope
  std::string self_name;                    // first parameter of that method
  std::vector<std::size_t> children;
  std::map<std::string, std::size_t, std::less<>> functions;  // defs directly in this scope
  std::map<std::string, std::size_t, std::less<>> classes;
  std::map<std::string, std::vector<const Expr*>, std::less<>> assignments;
  std::map<std::string, std::vector<ValueSite>, std::less<>> instance_attributes;  // `self.x = v`
  std::vector<const Expr*> references;                                             // Name and Attribute nodes
  std::vector<const Call*> calls;
};

struct PendingNode {
  const Node* node;
  std::size_t scope;
};

enum class TritonDecorator : std::uint8_t { none, jit, autotune, heuristics };

// Triton entry points (matched by the end of their resolved name, so `triton.runtime.Config` counts
// too) whose callable arguments Triton calls during a launch.
constexpr std::array<std::string_view, 5> kTritonCallbackTakers = {".autotune", ".heuristics", ".Config",
                                                                   ".Autotuner", ".Heuristics"};

std::vector<std::string> split_dotted(std::string_view dotted) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= dotted.size()) {
    const std::size_t dot = dotted.find('.', start);
    const std::size_t end = dot == std::string_view::npos ? dotted.size() : dot;
    parts.emplace_back(dotted.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool is_static_method(const FunctionDef& def) {
  return std::any_of(def.decorators.begin(), def.decorators.end(),
                     [](const ExprPtr& decorator) { return dotted_name(*decorator) == "staticmethod"; });
}

// Parameter names of a method without its leading self/cls.
std::vector<std::string> method_parameters(const FunctionDef& def) {
  std::vector<std::string> names;
  for (const auto& param : def.params) {
    names.push_back(param->name);
  }
  const bool has_receiver = !def.params.empty() && !is_static_method(def) &&
                            (def.params.front()->parameter_kind == ParameterKind::positional_only ||
                             def.params.front()->parameter_kind == ParameterKind::positional_or_keyword);
  if (has_receiver) {
    names.erase(names.begin());
  }
  return names;
}

// Name of the self/cls parameter of a method, empty for static methods.
std::string receiver_name(const FunctionDef& def) {
  return method_parameters(def).size() < def.params.size() ? def.params.front()->name : std::string();
}

// State of one resolution query (what may `expr` call or denote?). The query is a graph search
// over values, name lookups and class members; each is expanded at most once, so alias cycles
// terminate and the work stays linear in the module however it aliases (`self.x = self.x`
// repeated thousands of times used to cost cubic time).
class Resolution {
 public:
  // False when `value` was resolved before in this query.
  bool first_visit(const Expr* value, std::size_t scope) { return values_.insert({value, scope}).second; }
  // False when the name (looked up from `scope`) or the class member was expanded before.
  bool first_name_visit(std::size_t scope, std::string_view name) {
    return names_.insert({scope, std::string(name)}).second;
  }
  bool first_member_visit(std::size_t class_scope, std::string_view member) {
    return members_.insert({class_scope, std::string(member)}).second;
  }

 private:
  std::set<std::pair<const Expr*, std::size_t>> values_;
  std::set<std::pair<std::size_t, std::string>> names_;
  std::set<std::pair<std::size_t, std::string>> members_;
};

// One pending step of a resolution, on an explicit stack (alias chains of any length cannot
// exhaust the call stack): a value to resolve in a scope, or results to emit once the steps pushed
// before it are done, so results come in the order of a recursive depth-first search.
template <class Result>
struct ResolutionTask {
  const Expr* value = nullptr;  // null: emit `results`
  std::size_t scope = 0;
  std::vector<Result> results;
};

// Runs tasks depth-first: `expand(value, scope, next)` appends the steps of one value to `next`.
template <class Result, class Expand>
void run_resolution(std::vector<ResolutionTask<Result>> next, Resolution& resolution,
                    std::vector<Result>& out, const Expand& expand) {
  std::vector<ResolutionTask<Result>> stack;
  while (true) {
    std::move(next.rbegin(), next.rend(), std::back_inserter(stack));
    next.clear();
    if (stack.empty()) {
      return;
    }
    ResolutionTask<Result> task = std::move(stack.back());
    stack.pop_back();
    if (task.value == nullptr) {
      std::move(task.results.begin(), task.results.end(), std::back_inserter(out));
    } else if (resolution.first_visit(task.value, task.scope)) {
      expand(*task.value, task.scope, next);
    }
  }
}

class IndexBuilder {
 public:
  // Counts resolution work and gives up past kMaxIndexWork: every search is polynomial, but a
  // crafted module can still combine thousands of classes, members and aliases into billions of
  // steps.
  void spend(std::size_t units) const {
    work_ += units;
    if (work_ > kMaxIndexWork) {
      throw IndexTooComplex("module too complex to index: resolving its names takes more than " +
                            std::to_string(kMaxIndexWork) +
                            " steps; simplify the aliasing of kernels, classes and attributes");
    }
  }

  explicit IndexBuilder(std::string_view model_class) : model_class_(model_class) {}

  ModuleIndex build(const Module& module) {
    collect(module);
    register_custom_ops();
    classify_kernels();
    find_model();
    compute_reachability();
    find_launches();
    fill_definitions();
    return std::move(index_);
  }

 private:
  // ------------------------------------------------------------------------------------------
  // Phase 1: scopes, definitions, assignments, references and calls

  void collect(const Module& module) {
    Scope root;
    root.node = &module;
    scopes_.push_back(std::move(root));
    std::vector<PendingNode> pending{{&module, 0}};
    while (!pending.empty()) {
      const PendingNode next = pending.back();
      pending.pop_back();
      visit(*next.node, next.scope, pending);
    }
  }

  static void push_children(const Node& node, std::size_t scope, std::vector<PendingNode>& pending) {
    push_children_reversed(node, pending, [scope](const Node& child) { return PendingNode{&child, scope}; });
  }

  template <class T>
  static void push_all(const std::vector<std::unique_ptr<T>>& nodes, std::size_t scope,
                       std::vector<PendingNode>& pending) {
    std::for_each(nodes.rbegin(), nodes.rend(), [&](const std::unique_ptr<T>& node) {
      pending.push_back({node.get(), scope});
    });
  }

  template <class T>
  static void push_optional(const std::unique_ptr<T>& node, std::size_t scope,
                            std::vector<PendingNode>& pending) {
    if (node) {
      pending.push_back({node.get(), scope});
    }
  }

  void visit(const Node& node, std::size_t scope, std::vector<PendingNode>& pending) {
    if (const auto* def = node_cast<FunctionDef>(node)) {
      open_function(*def, scope, pending);
    } else if (const auto* lambda = node_cast<Lambda>(node)) {
      open_lambda(*lambda, scope, pending);
    } else if (const auto* class_def = node_cast<ClassDef>(node)) {
      open_class(*class_def, scope, pending);
    } else {
      record(node, scope);
      push_children(node, scope, pending);
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

  std::size_t open_scope(ScopeKind kind, const Node& node, std::string name, std::size_t outer) {
    Scope scope;
    scope.kind = kind;
    scope.node = &node;
    scope.qualified_name = qualify(outer, name);
    scope.name = std::move(name);
    scope.parent = outer;
    scope.method_class = scopes_[outer].method_class;
    scope.self_name = scopes_[outer].self_name;
    scopes_.push_back(std::move(scope));
    const std::size_t index = scopes_.size() - 1;
    scopes_[outer].children.push_back(index);
    return index;
  }

  void open_function(const FunctionDef& def, std::size_t outer, std::vector<PendingNode>& pending) {
    const std::size_t scope = open_scope(ScopeKind::function, def, def.name, outer);
    scopes_[outer].functions[def.name] = scope;
    if (scopes_[outer].kind == ScopeKind::class_body) {
      scopes_[scope].method_class = outer;
      scopes_[scope].self_name = receiver_name(def);
    }
    function_scopes_.push_back(scope);
    push_all(def.body, scope, pending);
    push_optional(def.returns, outer, pending);
    push_all(def.params, outer, pending);
    push_all(def.type_params, outer, pending);
    push_all(def.decorators, outer, pending);
  }

  void open_lambda(const Lambda& lambda, std::size_t outer, std::vector<PendingNode>& pending) {
    const std::size_t scope = open_scope(ScopeKind::lambda, lambda, "<lambda>", outer);
    push_optional(lambda.body, scope, pending);
    push_all(lambda.params, outer, pending);
  }

  void open_class(const ClassDef& class_def, std::size_t outer, std::vector<PendingNode>& pending) {
    const std::size_t scope = open_scope(ScopeKind::class_body, class_def, class_def.name, outer);
    scopes_[outer].classes[class_def.name] = scope;
    scopes_[scope].method_class.reset();
    scopes_[scope].self_name.clear();
    push_all(class_def.body, scope, pending);
    push_all(class_def.keywords, outer, pending);
    push_all(class_def.bases, outer, pending);
    push_all(class_def.decorators, outer, pending);
  }

  void record(const Node& node, std::size_t scope) {
    switch (node.kind()) {
      case NodeKind::name:
      case NodeKind::attribute:
        scopes_[scope].references.push_back(expr_cast(&node));
        break;
      case NodeKind::call:
        scopes_[scope].calls.push_back(node_cast<Call>(node));
        break;
      case NodeKind::assign: {
        const auto& assign = *node_cast<Assign>(node);
        for (const ExprPtr& target : assign.targets) {
          record_assignment(*target, *assign.value, scope);
        }
        break;
      }
      case NodeKind::ann_assign: {
        const auto& assign = *node_cast<AnnAssign>(node);
        if (assign.value) {
          record_assignment(*assign.target, *assign.value, scope);
        }
        break;
      }
      case NodeKind::named_expr: {
        const auto& named = *node_cast<NamedExpr>(node);
        record_assignment(*named.target, *named.value, scope);
        break;
      }
      case NodeKind::for_stmt: {
        const auto& loop = *node_cast<For>(node);
        record_assignment(*loop.target, *loop.iter, scope);  // the target takes the elements
        break;
      }
      case NodeKind::comprehension: {
        const auto& clause = *node_cast<Comprehension>(node);
        record_assignment(*clause.target, *clause.iter, scope);
        break;
      }
      case NodeKind::import_stmt:
        record_import(*node_cast<Import>(node));
        break;
      case NodeKind::import_from:
        record_import_from(*node_cast<ImportFrom>(node));
        break;
      default:
        break;
    }
  }

  static const ExprList* sequence_elements(const Expr& expr) {
    if (const auto* tuple = node_cast<Tuple>(expr)) {
      return &tuple->elements;
    }
    if (const auto* list = node_cast<List>(expr)) {
      return &list->elements;
    }
    return nullptr;
  }

  void record_assignment(const Expr& target, const Expr& value, std::size_t scope) {
    if (const auto* name = node_cast<Name>(target)) {
      scopes_[scope].assignments[name->id].push_back(&value);
      return;
    }
    if (const auto* attribute = node_cast<Attribute>(target)) {
      const auto* receiver = node_cast<Name>(attribute->value.get());
      const Scope& current = scopes_[scope];
      if (receiver != nullptr && current.method_class && receiver->id == current.self_name) {
        scopes_[*current.method_class].instance_attributes[attribute->attr].push_back({&value, scope});
      }
      return;
    }
    // `a, b = k1, k2` pairs up elements when both sides are displays of the same length.
    const ExprList* targets = sequence_elements(target);
    const ExprList* values = sequence_elements(value);
    if (targets != nullptr && values != nullptr && targets->size() == values->size()) {
      for (std::size_t i = 0; i < targets->size(); ++i) {
        record_assignment(*(*targets)[i], *(*values)[i], scope);
      }
    }
  }

  void record_import(const Import& node) {
    for (const auto& alias : node.names) {
      ImportInfo info;
      info.module = alias->name;
      info.alias = alias->asname;
      info.location = node.location;
      info.statement = &node;
      index_.imports.push_back(std::move(info));
      if (!alias->asname.empty()) {
        import_aliases_[alias->asname] = alias->name;
      } else {
        const std::string root = split_dotted(alias->name).front();
        import_aliases_[root] = root;
      }
    }
  }

  void record_import_from(const ImportFrom& node) {
    ImportInfo info;
    info.is_from = true;
    info.module = node.module;
    info.level = node.level;
    info.location = node.location;
    info.statement = &node;
    const std::string prefix = std::string(static_cast<std::size_t>(node.level), '.') + node.module;
    for (const auto& alias : node.names) {
      info.names.push_back({alias->name, alias->asname});
      if (alias->name == "*") {
        star_import_modules_.insert(prefix);
        continue;
      }
      const std::string& bound = alias->asname.empty() ? alias->name : alias->asname;
      import_aliases_[bound] =
          prefix.empty() || prefix.back() == '.' ? prefix + alias->name : prefix + "." + alias->name;
    }
    index_.imports.push_back(std::move(info));
  }

  // ------------------------------------------------------------------------------------------
  // Name resolution

  // "tt.jit" -> "triton.jit" through imports and module-level aliases such as `my_jit = tt.jit`.
  std::string resolve_dotted(std::string_view dotted, int depth = 0) const {
    const std::size_t dot = dotted.find('.');
    const std::string root(dotted.substr(0, dot));
    const std::string rest(dot == std::string_view::npos ? std::string_view() : dotted.substr(dot));
    if (const auto found = import_aliases_.find(root); found != import_aliases_.end()) {
      return found->second + rest;
    }
    if (depth < kMaxResolutionDepth) {
      if (const std::string& target = module_alias(root); !target.empty()) {
        return resolve_dotted(target + rest, depth + 1);
      }
    }
    if (star_import_modules_.contains("triton") &&
        (root == "jit" || root == "autotune" || root == "heuristics")) {
      return "triton." + std::string(dotted);
    }
    return std::string(dotted);
  }

  // The dotted name of the first module-level `root = a.b` (other than `root = root`), "" if none.
  // Memoised: a name assigned thousands of times is resolved for every attribute reference.
  const std::string& module_alias(const std::string& root) const {
    if (const auto cached = module_alias_cache_.find(root); cached != module_alias_cache_.end()) {
      return cached->second;
    }
    std::string alias;
    const auto& module_assignments = scopes_.front().assignments;
    if (const auto found = module_assignments.find(root); found != module_assignments.end()) {
      for (const Expr* value : found->second) {
        std::string target = dotted_name(*value);
        if (!target.empty() && target != root) {
          alias = std::move(target);
          break;
        }
      }
    }
    return module_alias_cache_.emplace(root, std::move(alias)).first->second;
  }

  TritonDecorator classify_decorator(const Expr& decorator) const {
    const auto* call = node_cast<Call>(decorator);
    const std::string name = dotted_name(call != nullptr ? *call->func : decorator);
    if (name.empty()) {
      return TritonDecorator::none;
    }
    const std::string resolved = resolve_dotted(name);
    if (!resolved.starts_with("triton.")) {
      return TritonDecorator::none;
    }
    const std::string_view last = std::string_view(resolved).substr(resolved.rfind('.') + 1);
    if (last == "jit") {
      return TritonDecorator::jit;
    }
    if (last == "autotune") {
      return TritonDecorator::autotune;
    }
    return last == "heuristics" ? TritonDecorator::heuristics : TritonDecorator::none;
  }

  // Scopes visible from `scope` for a name lookup: itself, then enclosing function scopes and the
  // module (class bodies do not enclose the functions defined in them).
  std::vector<std::size_t> lookup_chain(std::size_t scope) const {
    std::vector<std::size_t> chain{scope};
    for (std::optional<std::size_t> current = scopes_[scope].parent; current;
         current = scopes_[*current].parent) {
      if (scopes_[*current].kind != ScopeKind::class_body) {
        chain.push_back(*current);
      }
    }
    spend(chain.size());
    return chain;
  }

  std::optional<std::size_t> lookup_function(std::size_t scope, std::string_view name) const {
    for (const std::size_t candidate : lookup_chain(scope)) {
      if (const auto found = scopes_[candidate].functions.find(name);
          found != scopes_[candidate].functions.end()) {
        return found->second;
      }
    }
    return std::nullopt;
  }

  std::optional<std::size_t> lookup_class(std::size_t scope, std::string_view name) const {
    for (const std::size_t candidate : lookup_chain(scope)) {
      if (const auto found = scopes_[candidate].classes.find(name);
          found != scopes_[candidate].classes.end()) {
        return found->second;
      }
    }
    return std::nullopt;
  }

  // Values assigned to `name` in the nearest visible scope that assigns it.
  std::vector<ValueSite> assigned_values(std::size_t scope, std::string_view name) const {
    std::vector<ValueSite> sites;
    for (const std::size_t candidate : lookup_chain(scope)) {
      const auto& assignments = scopes_[candidate].assignments;
      if (const auto found = assignments.find(name); found != assignments.end()) {
        for (const Expr* value : found->second) {
          sites.push_back({value, candidate});
        }
        break;
      }
    }
    return sites;
  }

  // Method `name` of a class or, failing that, of its bases defined in this module, searched
  // depth-first, left to right, at most kMaxResolutionDepth levels up. A class is searched again
  // only when met at fewer levels: with bases shared between classes, the former recursive search
  // took time exponential in the depth of the hierarchy.
  std::optional<std::size_t> find_method(std::size_t class_scope, std::string_view name) const {
    spend(1);
    const Scope& own = scopes_[class_scope];
    if (const auto found = own.functions.find(name); found != own.functions.end()) {
      return found->second;
    }
    if (base_classes(class_scope).empty()) {
      return std::nullopt;
    }
    std::vector<std::pair<std::size_t, int>> pending{{class_scope, 0}};  // class, levels above class_scope
    std::map<std::size_t, int> searched;  // class -> fewest levels it was searched at
    while (!pending.empty()) {
      const std::size_t current = pending.back().first;
      const int depth = pending.back().second;
      pending.pop_back();
      if (const auto [seen, first] = searched.emplace(current, depth); !first) {
        if (seen->second <= depth) {
          continue;
        }
        seen->second = depth;
      }
      spend(1);
      const Scope& scope = scopes_[current];
      if (const auto found = scope.functions.find(name); found != scope.functions.end()) {
        return found->second;
      }
      if (depth < kMaxResolutionDepth) {
        const std::vector<std::size_t>& bases = base_classes(current);
        std::transform(bases.rbegin(), bases.rend(), std::back_inserter(pending), [depth](std::size_t base) {
          return std::pair{base, depth + 1};
        });
      }
    }
    return std::nullopt;
  }

  // Memoised: base lists are read for every method lookup and attribute resolution.
  const std::vector<std::size_t>& base_classes(std::size_t class_scope) const {
    if (const auto cached = base_cache_.find(class_scope); cached != base_cache_.end()) {
      return cached->second;
    }
    std::vector<std::size_t> bases;
    const auto* class_def = node_cast<ClassDef>(scopes_[class_scope].node);
    const std::optional<std::size_t> outer = scopes_[class_scope].parent;
    if (class_def != nullptr && outer) {
      for (const ExprPtr& base : class_def->bases) {
        const std::string name = dotted_name(*base);
        const auto found = lookup_class(*outer, name);
        // A base listed twice is a TypeError in Python; here it would only repeat work.
        if (found && *found != class_scope && std::find(bases.begin(), bases.end(), *found) == bases.end()) {
          bases.push_back(*found);
        }
      }
    }
    return base_cache_.emplace(class_scope, std::move(bases)).first->second;
  }

  // The class and its bases defined in this module, nearest first. Memoised: it is read for every
  // attribute of `self` that a resolution meets.
  const std::vector<std::size_t>& class_hierarchy(std::size_t class_scope) const {
    if (const auto cached = hierarchy_cache_.find(class_scope); cached != hierarchy_cache_.end()) {
      return cached->second;
    }
    std::vector<std::size_t> hierarchy{class_scope};
    for (std::size_t i = 0; i < hierarchy.size() && hierarchy.size() < kMaxHierarchySize; ++i) {
      for (const std::size_t base : base_classes(hierarchy[i])) {
        spend(1);
        if (hierarchy.size() >= kMaxHierarchySize) {
          break;  // a class with thousands of bases must not make this quadratic
        }
        if (std::find(hierarchy.begin(), hierarchy.end(), base) == hierarchy.end()) {
          hierarchy.push_back(base);
        }
      }
    }
    return hierarchy_cache_.emplace(class_scope, std::move(hierarchy)).first->second;
  }

  // Classes that `self` may be an instance of inside a method of `class_scope`: the class itself,
  // and the model class when it derives from it (so a base's forward sees the model's overrides).
  std::vector<std::size_t> receiver_classes(std::size_t class_scope) const {
    std::vector<std::size_t> receivers{class_scope};
    if (model_scope_ && *model_scope_ != class_scope) {
      const std::vector<std::size_t>& hierarchy = class_hierarchy(*model_scope_);
      if (std::find(hierarchy.begin(), hierarchy.end(), class_scope) != hierarchy.end()) {
        receivers.push_back(*model_scope_);
      }
    }
    return receivers;
  }

  // Values an attribute may hold on instances of `class_scope`: `self.name = v` in any method
  // and `name = v` in the class body, of the class and its bases.
  std::vector<ValueSite> held_values(std::size_t class_scope, const std::string& name) const {
    std::vector<ValueSite> sites;
    for (const std::size_t owner : class_hierarchy(class_scope)) {
      const Scope& scope = scopes_[owner];
      if (const auto found = scope.instance_attributes.find(name); found != scope.instance_attributes.end()) {
        sites.insert(sites.end(), found->second.begin(), found->second.end());
      }
      if (const auto found = scope.assignments.find(name); found != scope.assignments.end()) {
        for (const Expr* value : found->second) {
          sites.push_back({value, owner});
        }
      }
    }
    spend(sites.size());
    return sites;
  }

  // Classes of this module instantiated anywhere inside `value` (e.g. `Block(...)` in
  // `nn.ModuleList([Block(d) for _ in range(n)])`).
  // Each class once, in order of first instantiation. Memoised: a value is walked once however many
  // attributes of the instances it holds are used.
  const std::vector<std::size_t>& instantiated_classes(const Expr& value, std::size_t scope) const {
    const auto key = std::pair{&value, scope};
    if (const auto cached = instantiated_cache_.find(key); cached != instantiated_cache_.end()) {
      return cached->second;
    }
    std::vector<std::size_t> classes;
    std::set<std::size_t> seen;
    walk(value, [&](const Node& node) {
      spend(1);
      if (const auto* call = node_cast<Call>(node)) {
        if (const auto* callee = node_cast<Name>(call->func.get())) {
          if (const auto found = lookup_class(scope, callee->id); found && seen.insert(*found).second) {
            classes.push_back(*found);
          }
        }
      }
      return WalkAction::visit_children;
    });
    return instantiated_cache_.emplace(key, std::move(classes)).first->second;
  }

  // Classes instantiated in any value held by attribute `name` of `class_scope` instances, each
  // once, in order of first instantiation. Memoised per attribute: `self.a.m1()`, `self.a.m2()`...
  // all look through the same values.
  const std::vector<std::size_t>& held_instance_classes(std::size_t class_scope,
                                                        const std::string& name) const {
    const auto key = std::pair{class_scope, name};
    if (const auto cached = held_instances_cache_.find(key); cached != held_instances_cache_.end()) {
      return cached->second;
    }
    std::vector<std::size_t> classes;
    std::set<std::size_t> seen;
    for (const ValueSite& site : held_values(class_scope, name)) {
      for (const std::size_t instance_class : instantiated_classes(*site.value, site.scope)) {
        if (seen.insert(instance_class).second) {
          classes.push_back(instance_class);
        }
      }
    }
    return held_instances_cache_.emplace(key, std::move(classes)).first->second;
  }

  void add_methods(std::size_t class_scope, std::initializer_list<std::string_view> names,
                   std::vector<std::size_t>& out) const {
    for (const std::string_view name : names) {
      if (const auto method = find_method(class_scope, name)) {
        out.push_back(*method);
      }
    }
  }

  using CalleeTask = ResolutionTask<std::size_t>;
  using KernelTask = ResolutionTask<std::string>;

  // Queues `results` to be emitted in search order.
  template <class Result>
  static void emit(std::vector<ResolutionTask<Result>>& next, std::vector<Result> results) {
    if (!results.empty()) {
      next.push_back({nullptr, 0, std::move(results)});
    }
  }

  // Function scopes that `expr` (a reference in `scope`) may call.
  void callees_of(const Expr& expr, std::size_t scope, Resolution& resolution,
                  std::vector<std::size_t>& out) const {
    run_resolution<std::size_t>(
        {{&expr, scope, {}}}, resolution, out,
        [&](const Expr& value, std::size_t value_scope, std::vector<CalleeTask>& next) {
          spend(1);
          if (const auto* name = node_cast<Name>(value)) {
            name_callees(name->id, value_scope, resolution, next);
          } else if (const auto* attribute = node_cast<Attribute>(value)) {
            attribute_callees(*attribute, value_scope, resolution, next);
          } else if (const auto* conditional = node_cast<IfExp>(value)) {
            next.push_back({conditional->body.get(), value_scope, {}});
            next.push_back({conditional->orelse.get(), value_scope, {}});
          } else if (const auto* boolean = node_cast<BoolOp>(value)) {
            for (const ExprPtr& operand : boolean->values) {
              next.push_back({operand.get(), value_scope, {}});
            }
          }
        });
  }

  void name_callees(const std::string& name, std::size_t scope, Resolution& resolution,
                    std::vector<CalleeTask>& next) const {
    if (!resolution.first_name_visit(scope, name)) {
      return;  // the same lookup gives the same callees
    }
    std::vector<std::size_t> found;
    if (const auto function = lookup_function(scope, name)) {
      found.push_back(*function);
    }
    if (const auto class_scope = lookup_class(scope, name)) {
      add_methods(*class_scope, {"__init__", "__call__", "forward"}, found);
    }
    emit(next, std::move(found));
    for (const ValueSite& site : assigned_values(scope, name)) {
      next.push_back({site.value, site.scope, {}});
    }
  }

  void attribute_callees(const Attribute& attribute, std::size_t scope, Resolution& resolution,
                         std::vector<CalleeTask>& next) const {
    const Scope& current = scopes_[scope];
    std::vector<std::size_t> found;
    if (const auto* call = node_cast<Call>(attribute.value.get())) {
      const auto* callee = node_cast<Name>(call->func.get());
      if (callee != nullptr && callee->id == "super" && current.method_class) {
        for (const std::size_t base : base_classes(*current.method_class)) {
          add_methods(base, {attribute.attr}, found);
        }
      }
      emit(next, std::move(found));
      return;
    }
    const std::string dotted = dotted_name(attribute);
    const std::vector<std::string> parts = split_dotted(dotted);
    if (parts.size() < 2) {
      return;
    }
    if (current.method_class && parts.front() == current.self_name) {
      self_member_callees(*current.method_class, parts, resolution, next);
      return;
    }
    if (const auto custom_op = find_custom_op(dotted)) {
      found.push_back(*custom_op);
    }
    if (parts.size() == 2) {
      if (const auto class_scope = lookup_class(scope, parts.front())) {
        // `Fn.apply(x)` runs the forward of a torch.autograd.Function subclass. Its backward never runs
        // in an evaluation (forward is called under torch.no_grad), so it is not reachable.
        if (parts.back() == "apply") {
          add_methods(*class_scope, {"forward", "setup_context"}, found);
        }
        add_methods(*class_scope, {parts.back()}, found);
      }
    }
    emit(next, std::move(found));
  }

  // `torch.ops.ns.name(...)` (or `.default`) calls the function registered as "ns::name".
  std::optional<std::size_t> find_custom_op(std::string_view dotted) const {
    constexpr std::string_view kOverload = ".default";
    std::string resolved = resolve_dotted(dotted);
    if (resolved.ends_with(kOverload)) {
      resolved.resize(resolved.size() - kOverload.size());
    }
    const auto found = custom_ops_.find(resolved);
    return found == custom_ops_.end() ? std::nullopt : std::optional<std::size_t>(found->second);
  }

  // self.m -> method m or what attribute m holds; self.a.m -> method m of the class held by a.
  void self_member_callees(std::size_t class_scope, const std::vector<std::string>& parts,
                           Resolution& resolution, std::vector<CalleeTask>& next) const {
    if (parts.size() > 3) {
      return;
    }
    const std::string member = parts.size() == 2 ? parts[1] : parts[1] + "." + parts[2];
    for (const std::size_t receiver : receiver_classes(class_scope)) {
      if (!resolution.first_member_visit(receiver, member)) {
        continue;  // the same member of the same class gives the same callees
      }
      std::vector<std::size_t> methods;
      if (parts.size() == 3) {
        for (const std::size_t instance_class : held_instance_classes(receiver, parts[1])) {
          add_methods(instance_class, {parts[2]}, methods);
        }
        emit(next, std::move(methods));
        continue;
      }
      add_methods(receiver, {parts[1]}, methods);
      emit(next, std::move(methods));
      for (const ValueSite& site : held_values(receiver, parts[1])) {
        next.push_back({site.value, site.scope, {}});
        std::vector<std::size_t> instance_methods;
        for (const std::size_t instance_class : instantiated_classes(*site.value, site.scope)) {
          add_methods(instance_class, {"__call__", "forward"}, instance_methods);
        }
        emit(next, std::move(instance_methods));
      }
    }
  }

  // Names of the kernels that `expr` (evaluated in `scope`) may denote.
  void kernels_of(const Expr& expr, std::size_t scope, Resolution& resolution,
                  std::vector<std::string>& out) const {
    run_resolution<std::string>(
        {{&expr, scope, {}}}, resolution, out,
        [&](const Expr& value, std::size_t value_scope, std::vector<KernelTask>& next) {
          spend(1);
          if (const auto* name = node_cast<Name>(value)) {
            name_kernels(name->id, value_scope, resolution, next);
          } else if (const auto* attribute = node_cast<Attribute>(value)) {
            attribute_kernels(*attribute, value_scope, resolution, next);
          } else {
            for (const Node* child : container_parts(value)) {
              if (const auto* part = expr_cast(child)) {
                next.push_back({part, value_scope, {}});
              }
            }
          }
        });
  }

  // Sub-expressions whose kernels an expression may evaluate to: both branches of a conditional,
  // operands of and/or, elements of displays, dict values, and the container of a subscript.
  static std::vector<const Node*> container_parts(const Expr& expr) {
    switch (expr.kind()) {
      case NodeKind::if_exp: {
        const auto& conditional = *node_cast<IfExp>(expr);
        return {conditional.body.get(), conditional.orelse.get()};
      }
      case NodeKind::bool_op:
      case NodeKind::tuple:
      case NodeKind::list:
      case NodeKind::set:
      case NodeKind::starred:
        return children_of(expr);
      case NodeKind::dict: {
        std::vector<const Node*> values;
        for (const ExprPtr& value : node_cast<Dict>(expr)->values) {
          values.push_back(value.get());
        }
        return values;
      }
      case NodeKind::subscript:
        return {node_cast<Subscript>(expr)->value.get()};
      default:
        return {};
    }
  }

  void name_kernels(const std::string& name, std::size_t scope, Resolution& resolution,
                    std::vector<KernelTask>& next) const {
    if (!resolution.first_name_visit(scope, name)) {
      return;  // the same lookup gives the same kernels
    }
    std::vector<std::string> found;
    if (const auto function = lookup_function(scope, name); function && kernel_scopes_.contains(*function)) {
      found.push_back(name);
    }
    if (functional_kernels_.contains(name)) {
      found.push_back(name);
    }
    emit(next, std::move(found));
    for (const ValueSite& site : assigned_values(scope, name)) {
      next.push_back({site.value, site.scope, {}});
    }
  }

  void attribute_kernels(const Attribute& attribute, std::size_t scope, Resolution& resolution,
                         std::vector<KernelTask>& next) const {
    const std::vector<std::string> parts = split_dotted(dotted_name(attribute));
    if (parts.size() != 2) {
      return;
    }
    const Scope& current = scopes_[scope];
    if (current.method_class && parts.front() == current.self_name) {
      for (const std::size_t receiver : receiver_classes(*current.method_class)) {
        class_member_kernels(receiver, parts.back(), resolution, next);
      }
    } else if (const auto class_scope = lookup_class(scope, parts.front())) {
      class_member_kernels(*class_scope, parts.back(), resolution, next);
    }
  }

  void class_member_kernels(std::size_t class_scope, const std::string& member, Resolution& resolution,
                            std::vector<KernelTask>& next) const {
    if (!resolution.first_member_visit(class_scope, member)) {
      return;  // the same member of the same class gives the same kernels
    }
    if (const auto method = find_method(class_scope, member); method && kernel_scopes_.contains(*method)) {
      emit(next, {scopes_[*method].name});
    }
    for (const ValueSite& site : held_values(class_scope, member)) {
      next.push_back({site.value, site.scope, {}});
    }
  }

  // ------------------------------------------------------------------------------------------
  // Phase 2: kernels

  // Functions registered with @torch.library.custom_op("ns::name") or triton_op, which callers
  // reach as torch.ops.ns.name.
  void register_custom_ops() {
    for (const std::size_t scope : function_scopes_) {
      for (const ExprPtr& decorator : node_cast<FunctionDef>(scopes_[scope].node)->decorators) {
        const auto* call = node_cast<Call>(*decorator);
        if (call == nullptr || call->args.empty()) {
          continue;
        }
        const std::string registrar = resolve_dotted(dotted_name(*call->func));
        const auto* op_name = node_cast<StringLiteral>(*call->args.front());
        const bool registers = registrar.starts_with("torch.") &&
                               (registrar.ends_with(".custom_op") || registrar.ends_with(".triton_op"));
        if (!registers || op_name == nullptr) {
          continue;
        }
        const std::size_t separator = op_name->value.find("::");
        if (separator != std::string::npos) {
          custom_ops_["torch.ops." + op_name->value.substr(0, separator) + "." +
                      op_name->value.substr(separator + 2)] = scope;
        }
      }
    }
  }

  void classify_kernels() {
    for (const std::size_t scope : function_scopes_) {
      const auto& def = *node_cast<FunctionDef>(scopes_[scope].node);
      KernelInfo kernel;
      bool is_jit = false;
      for (const ExprPtr& decorator : def.decorators) {
        const TritonDecorator kind = classify_decorator(*decorator);
        is_jit = is_jit || kind == TritonDecorator::jit;
        kernel.autotuned = kernel.autotuned || kind == TritonDecorator::autotune;
        kernel.heuristics = kernel.heuristics || kind == TritonDecorator::heuristics;
        kernel.decorators.push_back(decorator_name(*decorator));
      }
      if (!is_jit) {
        continue;
      }
      kernel.name = def.name;
      kernel.qualified_name = scopes_[scope].qualified_name;
      kernel.location = def.location;
      kernel.definition = &def;
      kernel_scopes_.insert(scope);
      index_.kernels.push_back(std::move(kernel));
    }
    classify_functional_kernels();
    std::stable_sort(index_.kernels.begin(), index_.kernels.end(),
                     [](const KernelInfo& a, const KernelInfo& b) { return a.location < b.location; });
  }

  std::string decorator_name(const Expr& decorator) const {
    const auto* call = node_cast<Call>(decorator);
    const std::string name = dotted_name(call != nullptr ? *call->func : decorator);
    return name.empty() ? std::string("<expression>") : resolve_dotted(name);
  }

  // Module-level `name = triton.jit(fn)` or `name = triton.autotune(...)(triton.jit(fn))`.
  void classify_functional_kernels() {
    for (const auto& [name, values] : scopes_.front().assignments) {
      for (const Expr* value : values) {
        const FunctionDef* wrapped = nullptr;
        if (!is_kernel_expression(*value, 0, wrapped)) {
          continue;
        }
        KernelInfo kernel;
        kernel.name = name;
        kernel.qualified_name = name;
        kernel.location = value->location;
        kernel.definition = wrapped;
        functional_kernels_.insert(name);
        index_.kernels.push_back(std::move(kernel));
        break;
      }
    }
  }

  bool is_kernel_expression(const Expr& value, int depth, const FunctionDef*& wrapped) const {
    const auto* call = node_cast<Call>(value);
    if (call == nullptr || call->args.empty() || depth > kMaxResolutionDepth) {
      return false;
    }
    const Expr& argument = *call->args.front();
    const TritonDecorator kind = classify_decorator(*call->func);
    const bool applies_decorator_factory = node_cast<Call>(call->func.get()) != nullptr;
    if (kind == TritonDecorator::none) {
      return false;
    }
    if (kind == TritonDecorator::jit || !applies_decorator_factory) {
      if (const auto* function = node_cast<Name>(argument)) {
        const auto scope = lookup_function(0, function->id);
        wrapped = scope ? node_cast<FunctionDef>(scopes_[*scope].node) : nullptr;
      }
      return kind == TritonDecorator::jit;
    }
    return is_kernel_expression(argument, depth + 1, wrapped);
  }

  // ------------------------------------------------------------------------------------------
  // Phase 3: ModelNew

  std::optional<std::size_t> model_class_scope() const {
    const Scope& module = scopes_.front();
    if (const auto found = module.classes.find(model_class_); found != module.classes.end()) {
      return found->second;
    }
    for (const ValueSite& site : assigned_values(0, model_class_)) {
      if (const auto* name = node_cast<Name>(site.value)) {
        if (const auto found = lookup_class(0, name->id)) {
          return found;
        }
      }
    }
    return std::nullopt;
  }

  void find_model() {
    const auto class_scope = model_class_scope();
    if (!class_scope) {
      return;
    }
    const auto& class_def = *node_cast<ClassDef>(scopes_[*class_scope].node);
    ModelInfo model;
    model.class_name = class_def.name;
    model.location = class_def.location;
    model.definition = &class_def;
    for (const ExprPtr& base : class_def.bases) {
      model.bases.push_back(dotted_name(*base));
    }
    if (const auto init = find_method(*class_scope, "__init__")) {
      model.has_init = true;
      model.init_params = method_parameters(*node_cast<FunctionDef>(scopes_[*init].node));
    }
    model_scope_ = class_scope;
    forward_scope_ = find_method(*class_scope, "forward");
    if (forward_scope_) {
      const auto& forward = *node_cast<FunctionDef>(scopes_[*forward_scope_].node);
      model.has_forward = true;
      model.forward = &forward;
      model.forward_location = forward.location;
      model.forward_params = method_parameters(forward);
    }
    index_.model = std::move(model);
  }

  // ------------------------------------------------------------------------------------------
  // Phase 4: functions reachable from ModelNew.forward

  // The objects a parameter or tensor-attribute read passes through (`self.mlp` and `self.mlp.fc` in
  // `self.mlp.fc.weight`): a reference to a module otherwise counts as a call of it, so a candidate
  // handing its inherited weights to a kernel would reach the problem's own forward.
  static std::set<const Expr*> tensor_read_receivers(const std::vector<const Expr*>& references) {
    std::set<const Expr*> receivers;
    for (const Expr* reference : references) {
      const auto* read = node_cast<Attribute>(reference);
      if (read == nullptr ||
          std::ranges::find(kTensorReadAttributes, read->attr) == kTensorReadAttributes.end()) {
        continue;
      }
      for (const auto* inner = node_cast<Attribute>(read->value.get()); inner != nullptr;
           inner = node_cast<Attribute>(inner->value.get())) {
        receivers.insert(inner);
      }
    }
    return receivers;
  }

  void compute_reachability() {
    if (!forward_scope_) {
      return;
    }
    std::deque<std::size_t> queue{*forward_scope_};
    // One search for the whole call graph: what an expression calls was queued when the search
    // first met it, so meeting it again from another reference adds nothing.
    Resolution resolution;
    const std::vector<std::size_t> callbacks = launch_callback_scopes(resolution);
    queue.insert(queue.end(), callbacks.begin(), callbacks.end());
    while (!queue.empty()) {
      const std::size_t scope = queue.front();
      queue.pop_front();
      if (!reachable_.insert(scope).second) {
        continue;
      }
      if (scopes_[scope].kind != ScopeKind::class_body) {
        index_.reachable_functions.push_back(scopes_[scope].qualified_name);
      }
      // Everything defined inside a reachable function (nested defs, lambdas) counts as reachable.
      queue.insert(queue.end(), scopes_[scope].children.begin(), scopes_[scope].children.end());
      const std::set<const Expr*> read_through = tensor_read_receivers(scopes_[scope].references);
      for (const Expr* reference : scopes_[scope].references) {
        if (read_through.contains(reference)) {
          continue;
        }
        std::vector<std::size_t> callees;
        callees_of(*reference, scope, resolution, callees);
        // Kernels run on the GPU when launched; they are not host functions of the call graph.
        std::erase_if(callees, [this](std::size_t callee) { return kernel_scopes_.contains(callee); });
        queue.insert(queue.end(), callees.begin(), callees.end());
      }
    }
  }

  // A call that hands callables to Triton, which calls them during a launch: triton.autotune
  // (prune_configs_by, perf_model, pre/post hooks), triton.heuristics (the value functions),
  // triton.Config(pre_hook=...), kernel.add_pre_run_hook(fn).
  bool hands_callables_to_triton(const Call& call) const {
    if (const auto* method = node_cast<Attribute>(call.func.get());
        method != nullptr && method->attr == "add_pre_run_hook") {
      return true;
    }
    const std::string name = resolve_dotted(dotted_name(*call.func));
    return name.starts_with("triton.") &&
           std::any_of(kTritonCallbackTakers.begin(), kTritonCallbackTakers.end(),
                       [&name](std::string_view taker) { return name.ends_with(taker); });
  }

  // The functions and lambdas handed to Triton anywhere in the module (see hands_callables_to_triton):
  // they run inside forward's launches, so they are as reachable as forward's own calls.
  std::vector<std::size_t> launch_callback_scopes(Resolution& resolution) {
    std::unordered_map<const Node*, std::size_t> lambda_scopes;
    for (std::size_t scope = 0; scope < scopes_.size(); ++scope) {
      if (scopes_[scope].kind == ScopeKind::lambda) {
        lambda_scopes.emplace(scopes_[scope].node, scope);
      }
    }
    std::vector<std::size_t> roots;
    for (std::size_t scope = 0; scope < scopes_.size(); ++scope) {
      for (const Call* call : scopes_[scope].calls) {
        spend(1);
        if (!hands_callables_to_triton(*call)) {
          continue;
        }
        const auto visit_argument = [&](const Node& node) {
          spend(1);
          if (const auto found = lambda_scopes.find(&node); found != lambda_scopes.end()) {
            roots.push_back(found->second);
            return WalkAction::skip_children;  // its body is searched as a reachable scope
          }
          if (node_cast<Name>(node) != nullptr || node_cast<Attribute>(node) != nullptr) {
            callees_of(*expr_cast(&node), scope, resolution, roots);
          }
          return WalkAction::visit_children;
        };
        for (const ExprPtr& argument : call->args) {
          walk(*argument, visit_argument);
        }
        for (const auto& keyword : call->keywords) {
          walk(*keyword->value, visit_argument);
        }
      }
    }
    std::erase_if(roots, [this](std::size_t callee) { return kernel_scopes_.contains(callee); });
    return roots;
  }

  // ------------------------------------------------------------------------------------------
  // Phase 5: launch sites

  std::string function_name(std::size_t scope) const {
    return scope == 0 ? std::string("<module>") : scopes_[scope].qualified_name;
  }

  // A subscripted value we cannot resolve but that may hold a kernel (a parameter, a container).
  bool may_hold_kernel(const Expr& value, std::size_t scope) const {
    if (node_cast<Subscript>(value) != nullptr) {
      return true;
    }
    const std::string name = dotted_name(value);
    if (name.empty()) {
      return false;
    }
    const std::string root = split_dotted(name).front();
    const bool is_builtin =
        std::find(kBuiltinTypeNames.begin(), kBuiltinTypeNames.end(), root) != kBuiltinTypeNames.end();
    return !is_builtin && !import_aliases_.contains(root) && !lookup_function(scope, root) &&
           !lookup_class(scope, root);
  }

  // Kernels that `expr` (evaluated in `scope`) may denote, as kernels_of() finds them. Displays,
  // conditionals and subscripts denote what their parts denote; the search from a name or an
  // attribute chain is memoised per scope, so thousands of launches of one heavily aliased name
  // cost one search instead of one each.
  void launchable_kernels(const Expr& expr, std::size_t scope, std::vector<std::string>& out) {
    std::vector<const Expr*> pending{&expr};
    while (!pending.empty()) {
      const Expr* value = pending.back();
      pending.pop_back();
      spend(1);
      if (node_cast<Name>(value) == nullptr && node_cast<Attribute>(value) == nullptr) {
        const std::vector<const Node*> parts = container_parts(*value);
        std::for_each(parts.rbegin(), parts.rend(), [&pending](const Node* part) {
          if (const auto* part_expr = expr_cast(part)) {
            pending.push_back(part_expr);
          }
        });
        continue;
      }
      auto key = std::pair{scope, dotted_name(*value)};
      auto cached = launchable_cache_.find(key);
      if (cached == launchable_cache_.end()) {
        Resolution resolution;
        std::vector<std::string> kernels;
        kernels_of(*value, scope, resolution, kernels);
        normalize_launched(kernels);
        cached = launchable_cache_.emplace(std::move(key), std::move(kernels)).first;
      }
      spend(cached->second.size());
      out.insert(out.end(), cached->second.begin(), cached->second.end());
    }
  }

  // Kernels launched by `call`: `k[grid](...)`, `wrapper(k)[grid](...)` or `k.run(...)`.
  std::vector<std::string> launched_by(const Call& call, std::size_t scope, bool& unresolved) {
    std::vector<std::string> kernels;
    if (const auto* subscript = node_cast<Subscript>(call.func.get())) {
      const Expr& launched = *subscript->value;
      launchable_kernels(launched, scope, kernels);
      if (const auto* wrapper = node_cast<Call>(launched)) {
        for (const ExprPtr& argument : wrapper->args) {
          launchable_kernels(*argument, scope, kernels);
        }
      }
      unresolved = kernels.empty() && may_hold_kernel(launched, scope);
    } else if (const auto* method = node_cast<Attribute>(call.func.get());
               method != nullptr && method->attr == "run") {
      launchable_kernels(*method->value, scope, kernels);
    }
    normalize_launched(kernels);
    return kernels;
  }

  void find_launches() {
    std::vector<KernelLaunch> unresolved_sites;
    for (std::size_t scope = 0; scope < scopes_.size(); ++scope) {
      const bool reachable = reachable_.contains(scope);
      for (const Call* call : scopes_[scope].calls) {
        bool unresolved = false;
        for (std::string& kernel : launched_by(*call, scope, unresolved)) {
          index_.launches.push_back(
              {std::move(kernel), function_name(scope), call->location, reachable, false});
        }
        if (unresolved && reachable) {
          unresolved_sites.push_back({{}, function_name(scope), call->location, true, true});
        }
      }
    }
    add_indirect_launches(unresolved_sites);
    std::stable_sort(index_.launches.begin(), index_.launches.end(),
                     [](const KernelLaunch& a, const KernelLaunch& b) {
                       return a.location < b.location || (a.location == b.location && a.kernel < b.kernel);
                     });
  }

  // A reachable launch of an unresolved value (e.g. `def launch(kernel): kernel[grid](...)`)
  // launches the kernels that reachable code refers to without launching them itself.
  void add_indirect_launches(std::vector<KernelLaunch>& unresolved_sites) {
    if (unresolved_sites.empty()) {
      return;
    }
    std::sort(unresolved_sites.begin(), unresolved_sites.end(),
              [](const KernelLaunch& a, const KernelLaunch& b) { return a.location < b.location; });
    const KernelLaunch& site = unresolved_sites.front();
    std::set<std::string> launched;
    for (const KernelLaunch& launch : index_.launches) {
      if (launch.reachable_from_forward) {
        launched.insert(launch.kernel);
      }
    }
    // One search over all references: a value met again denotes kernels already collected.
    Resolution resolution;
    for (const std::size_t scope : reachable_) {
      for (const Expr* reference : scopes_[scope].references) {
        std::vector<std::string> kernels;
        kernels_of(*reference, scope, resolution, kernels);
        for (std::string& kernel : kernels) {
          if (launched.insert(kernel).second) {
            index_.launches.push_back({std::move(kernel), site.function, site.location, true, true});
          }
        }
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Module-level definitions

  void fill_definitions() {
    for (const std::size_t scope : scopes_.front().children) {
      const Scope& child = scopes_[scope];
      if (const auto* def = node_cast<FunctionDef>(child.node)) {
        index_.functions.push_back({def->name, kernel_scopes_.contains(scope), def->location, def});
      } else if (const auto* class_def = node_cast<ClassDef>(child.node)) {
        index_.classes.push_back(class_info(*class_def, scope));
      }
    }
  }

  ClassInfo class_info(const ClassDef& class_def, std::size_t scope) const {
    ClassInfo info;
    info.name = class_def.name;
    info.location = class_def.location;
    info.definition = &class_def;
    for (const ExprPtr& base : class_def.bases) {
      info.bases.push_back(dotted_name(*base));
    }
    for (const std::size_t child : scopes_[scope].children) {
      if (scopes_[child].kind == ScopeKind::function) {
        info.methods.push_back(scopes_[child].name);
      }
    }
    return info;
  }

  std::string model_class_;  // the root class: ModelNew, or Model for a problem
  ModuleIndex index_;
  std::vector<Scope> scopes_;
  std::vector<std::size_t> function_scopes_;
  std::map<std::string, std::string, std::less<>> import_aliases_;  // bound name -> dotted module path
  std::set<std::string, std::less<>> star_import_modules_;
  std::set<std::size_t> kernel_scopes_;
  std::set<std::string, std::less<>> functional_kernels_;
  std::map<std::string, std::size_t, std::less<>> custom_ops_;  // "torch.ops.ns.name" -> function
  std::optional<std::size_t> model_scope_;
  std::optional<std::size_t> forward_scope_;
  std::set<std::size_t> reachable_;
  mutable std::size_t work_ = 0;
  // Memoised lookups over the finished scopes (filled lazily, hence mutable).
  mutable std::map<std::size_t, std::vector<std::size_t>> base_cache_;
  mutable std::map<std::size_t, std::vector<std::size_t>> hierarchy_cache_;
  mutable std::map<std::string, std::string, std::less<>> module_alias_cache_;
  mutable std::map<std::pair<const Expr*, std::size_t>, std::vector<std::size_t>> instantiated_cache_;
  mutable std::map<std::pair<std::size_t, std::string>, std::vector<std::size_t>> held_instances_cache_;
  std::map<std::pair<std::size_t, std::string>, std::vector<std::string>> launchable_cache_;
};

}  // namespace

const KernelInfo* ModuleIndex::find_kernel(std::string_view name) const {
  const auto found = std::find_if(kernels.begin(), kernels.end(),
                                  [name](const KernelInfo& kernel) { return kernel.name == name; });
  return found == kernels.end() ? nullptr : &*found;
}

// Both keep first-seen order; the sets keep them linearithmic for thousands of launches.
std::vector<std::string> ModuleIndex::launched_kernels() const {
  std::vector<std::string> names;
  std::set<std::string_view> seen;
  for (const KernelLaunch& launch : launches) {
    if (launch.reachable_from_forward && seen.insert(launch.kernel).second) {
      names.push_back(launch.kernel);
    }
  }
  return names;
}

std::vector<std::string> ModuleIndex::unlaunched_kernels() const {
  const std::vector<std::string> launched = launched_kernels();
  std::set<std::string_view> seen(launched.begin(), launched.end());
  std::vector<std::string> names;
  for (const KernelInfo& kernel : kernels) {
    if (seen.insert(kernel.name).second) {
      names.push_back(kernel.name);
    }
  }
  return names;
}

ModuleIndex build_module_index(const Module& module, std::string_view model_class) {
  return IndexBuilder(model_class).build(module);
}

}  // namespace kforge::source
