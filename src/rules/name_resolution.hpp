#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "source/python_ast.hpp"

// Static name resolution shared by the rules: what a Name/Attribute chain denotes, whatever the
// spelling. `F.softmax` after `import torch.nn.functional as F`, `mm` after
// `from torch import matmul as mm`, `T.softmax` after `import torch as T`, `sm` after a
// module-level `sm = torch.softmax`, `self.act` after `self.act = F.gelu` in __init__ and
// `getattr(torch, "softmax")` all resolve to their fully-qualified origin.
//
// Origins are dotted strings. A call in a chain is written "()": `torch.empty(n).sum` resolves to
// "torch.empty().sum", and a local `out = torch.empty(n)` makes `out.sum` resolve to the same.
// Unbound names that are Python builtins resolve to "builtins.<name>" (so a candidate's own
// function called `open` is not the builtin). Anything else resolves to "" (unknown: a
// parameter, a local computed value, a name nobody binds).
//
// Resolution is static and over-approximates: when a name is bound to several values the first
// one that resolves wins, and both branches of `a if c else b` are tried. Code that builds names
// at runtime (exec, computed getattr, globals()[...]) is beyond it; other rules forbid those.
namespace kforge::rules {

enum class ScopeKind : std::uint8_t { module, class_body, function, lambda };

// A Python scope: the module, a class body, a function or a lambda.
struct Scope {
  ScopeKind kind = ScopeKind::module;
  const source::Node* node = nullptr;  // Module, ClassDef, FunctionDef or Lambda
  std::optional<std::size_t> parent;
  // Python __qualname__ as ModuleIndex::reachable_functions spells it ("" for the module).
  std::string qualified_name;
  // For a method (and functions nested in it): the receiver parameter and the class scope.
  std::string self_name;
  std::optional<std::size_t> method_class;
  // Names bound by import statements in this scope, with the dotted origin they bind.
  std::map<std::string, std::string, std::less<>> imports;
  // Every name bound in this scope (parameters, assignment targets, defs, classes, imports...).
  std::set<std::string, std::less<>> bound;
  // Values assigned to a name (`name = value`, `name: T = value`, `with v as name`, `name := v`).
  std::map<std::string, std::vector<const source::Expr*>, std::less<>> values;
  // Iterables a loop or comprehension target takes its elements from (`for name in iterable`).
  std::map<std::string, std::vector<const source::Expr*>, std::less<>> elements;
  // `self.name = value` in the methods of this class (kept on the class scope), with the scope the
  // value is evaluated in.
  std::map<std::string, std::vector<std::pair<const source::Expr*, std::size_t>>, std::less<>>
      instance_attributes;
  // Names declared `global` / `nonlocal` in this scope.
  std::set<std::string, std::less<>> globals;
  std::set<std::string, std::less<>> nonlocals;
  // def and class statements directly in this scope.
  std::map<std::string, std::size_t, std::less<>> functions;
  std::map<std::string, std::size_t, std::less<>> classes;
};

// Where a Name gets its value from.
enum class BindingKind : std::uint8_t {
  import,       // an import statement
  local,        // an assignment, parameter, def or class in some scope
  star_import,  // unbound, but a `from m import *` may provide it
  builtin,      // a Python builtin
  unbound,      // nothing binds it
};

struct Binding {
  BindingKind kind = BindingKind::unbound;
  std::optional<std::size_t> scope;  // the scope holding the binding (import or local)
};

// A fully-qualified origin, with the origin bound by the import statement at the root of the
// chain ("" when the root is not an import), e.g. {"torch.nn.functional.softmax", "torch.nn.functional"}
// for `F.softmax`.
struct Resolved {
  std::string origin;
  std::string import_origin;
};

class NameResolver {
 public:
  explicit NameResolver(const source::Module& module);

  // The fully-qualified origin of `expr` (see above), "" when unknown.
  std::string resolve(const source::Expr& expr) const { return resolve_with_import(expr).origin; }
  Resolved resolve_with_import(const source::Expr& expr) const;
  // values_of(), find_method() and callees() throw source::IndexTooComplex when a module needs
  // more than kMaxResolverWork steps of them (analyse_candidate() rejects it).

  // Values `expr` may hold: for a Name, what is assigned to it (and the iterables a loop target
  // walks), followed transitively through plain aliases; for `self.attr`, what any method of the
  // class or its in-module bases assigns to it; for `x[i]`, the values of `x`. May be empty.
  std::vector<const source::Expr*> values_of(const source::Expr& expr) const;

  Binding binding_of(const source::Name& name) const;
  // The binding `name` has when looked up from `scope`.
  Binding binding_of(const std::string& name, std::size_t scope) const { return binding_in(name, scope); }

  // The scope in which `node` is evaluated (decorators and defaults belong to the outer scope).
  std::size_t scope_of(const source::Node& node) const;
  const Scope& scope(std::size_t index) const { return scopes_[index]; }
  std::size_t scope_count() const { return scopes_.size(); }
  // The scope that a def, lambda or class node opens; nullopt for other nodes.
  std::optional<std::size_t> scope_opened_by(const source::Node& node) const;
  // The syntactic parent of `node`, null for the module.
  const source::Node* parent(const source::Node& node) const;

  // The in-module class scope a class expression (a Name) denotes, if any.
  std::optional<std::size_t> class_named(const source::Expr& expr) const;
  // The class scope and its bases defined in this module, nearest first.
  std::vector<std::size_t> class_hierarchy(std::size_t class_scope) const;
  // Method `name` of a class scope or of its in-module bases.
  std::optional<std::size_t> find_method(std::size_t class_scope, std::string_view name) const;
  // Function scopes that a call may enter: a def bound to the called name, a method called on
  // self/cls or on an in-module class, the __init__ of an instantiated in-module class.
  std::vector<std::size_t> callees(const source::Call& call) const;
  // Modules of the `from m import *` statements, in source order.
  const std::vector<std::string>& star_imports() const { return star_imports_; }

 private:
  struct Query;
  void build(const source::Module& module);
  Resolved resolve_in(const source::Expr& expr, std::size_t scope, Query& query) const;
  Resolved resolve_name(const std::string& name, std::size_t scope, Query& query) const;
  Resolved resolve_member(std::size_t class_scope, const std::string& member, Query& query) const;
  Resolved resolve_member_uncached(std::size_t class_scope, const std::string& member, Query& query) const;
  // The cached resolution of (scope, key), computed by `compute` on a miss.
  template <class Compute>
  Resolved memoised(std::size_t scope, std::string key, Query& query, const Compute& compute) const;
  Binding binding_in(const std::string& name, std::size_t scope) const;
  // The method class when `expr` is the receiver (self/cls) of the method `scope` belongs to.
  std::optional<std::size_t> receiver_class(const source::Expr& expr, std::size_t scope) const;
  void collect_values(const source::Expr& expr, std::size_t scope, int depth,
                      std::set<const source::Expr*>& seen, std::vector<const source::Expr*>& out) const;
  void add_member_values(std::size_t class_scope, const std::string& member, int depth,
                         std::set<const source::Expr*>& seen, std::vector<const source::Expr*>& out) const;
  std::optional<std::pair<std::size_t, std::string>> values_key(const source::Expr& expr,
                                                                std::size_t scope) const;
  // Counts query work; throws source::IndexTooComplex past kMaxResolverWork.
  void spend(std::size_t units) const;

  std::vector<Scope> scopes_;
  std::unordered_map<const source::Node*, std::size_t> scope_of_;
  std::unordered_map<const source::Node*, std::size_t> opened_;
  std::unordered_map<const source::Node*, const source::Node*> parent_;
  std::vector<std::string> star_imports_;
  // Per scope: resolutions of its names and (keyed ".member") of its members when it is a class;
  // see memoised(). A cache, so logically const.
  mutable std::vector<std::unordered_map<std::string, Resolved>> cache_;
  // values_of() per binding (see values_key) and class_hierarchy() per class: every reference
  // asks again, so hostile modules with thousands of values and sites stay linear.
  mutable std::map<std::pair<std::size_t, std::string>, std::vector<const source::Expr*>> values_cache_;
  mutable std::unordered_map<std::size_t, std::vector<std::size_t>> hierarchy_cache_;
  // resolve_with_import() per expression: the rules ask about the same references many times.
  // Only answers that were not cut short are kept, so a later, fuller answer is never hidden.
  mutable std::unordered_map<const source::Expr*, Resolved> expression_cache_;
  mutable std::size_t work_ = 0;
};

// Bound on the work of all queries on one NameResolver (values walked, bases visited). Real
// candidates need a few thousand steps; crafted ones are rejected as too complex to analyse.
inline constexpr std::size_t kMaxResolverWork = 4'000'000;

// Small helpers over origins.

// True when `origin` is `module` or lies inside it ("torch.nn.functional.softmax" is in
// "torch.nn" but not in "torch.n").
bool in_module(std::string_view origin, std::string_view module);
// True when `origin` names an object reached by attribute access only (no call in the chain).
bool is_static_origin(std::string_view origin);
// The last component of a dotted origin ("softmax" for "torch.softmax").
std::string_view last_component(std::string_view origin);
// The literal value of a plain (non-f) string, or nullopt.
std::optional<std::string> string_literal(const source::Expr* expr);

}  // namespace kforge::rules
