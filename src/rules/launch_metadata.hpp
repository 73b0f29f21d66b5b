#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rules/name_resolution.hpp"
#include "source/python_ast.hpp"

// Launch metadata: values an honest candidate may keep across forward calls because they describe how
// to launch its kernels, not what they compute. Sizes, strides, dtypes and devices of tensors, grids
// and block sizes computed from them (triton.cdiv, next_power_of_2, math, int arithmetic), device
// properties (SM count, capability), stream handles, kernel and function objects, literals, and the
// construction constants of __init__. A tensor, a value computed from tensor data (`x.sum()`), a
// buffer address (`x.data_ptr()`), a clock reading or a counter that reads the state it updates are
// not: the cached-state rule reports keeping those.
namespace kforge::rules {

// Where persistent state lives: "self<C>.attr" (an attribute of the instances of class scope C),
// "scope<S>.name" (a module-level name, S = 0, or a variable of an enclosing function S).
using StateRoot = std::string;

class LaunchMetadata {
 public:
  // `written_roots`: the state that forward's call graph writes. Reading it is metadata only when the
  // value is moved whole (`grid = self.grids.get(key)`), not computed with (`self.calls + 1`).
  LaunchMetadata(const NameResolver& names, std::set<StateRoot> written_roots);

  // The state root `expr` (an Attribute/Subscript/Name chain) lies in, seen from `scope`, if any.
  static std::optional<StateRoot> root_of(const source::Expr& expr, std::size_t scope,
                                          const NameResolver& names);

  // Whether `value`, evaluated in `scope`, is launch metadata. `adapting`: the value is stored by an
  // except handler, where computing with the kept state (`block = block // 2` after
  // triton.OutOfResources) adapts launch metadata to a failure instead of counting calls.
  bool is_metadata(const source::Expr& value, std::size_t scope, bool adapting = false) const;
  // Whether every `return` of the function opened at `function_scope` gives launch metadata, its
  // parameters taken as metadata (they are the cache key of a memoised function).
  bool returns_metadata(std::size_t function_scope) const;

 private:
  struct Context {
    bool in_operation = false;               // inside arithmetic, a comparison or a call's arguments
    bool adapting = false;                   // kept state may be computed with (an except handler)
    std::set<std::size_t> parameter_scopes;  // functions whose parameters count as metadata
    int depth = 0;
  };
  // A name's sources in one scope: the expressions assigned to it; `element` when the name takes one
  // element of the source (tuple unpacking, a loop or comprehension target).
  struct Source {
    const source::Expr* value = nullptr;
    bool element = false;
  };
  struct Bindings {
    std::map<std::string, std::vector<Source>, std::less<>> sources;
    std::set<std::string, std::less<>> parameters;
    std::set<std::string, std::less<>> opaque;  // bound without a value we can follow (augmented, with)
  };

  bool check(const source::Expr& expr, std::size_t scope, Context context) const;
  bool check_name(const source::Name& name, std::size_t scope, const Context& context) const;
  bool check_call(const source::Call& call, std::size_t scope, const Context& context) const;
  bool check_state_read(const source::Expr& expr, std::size_t scope, const Context& context) const;
  bool check_instance_attribute(std::size_t class_scope, const std::string& attr,
                                const Context& context) const;
  bool check_sources(const std::vector<Source>& sources, const Context& context) const;
  bool callee_returns_metadata(std::size_t callee, const Context& context) const;
  // A parameter of a helper the candidate calls: metadata when every call passes metadata for it.
  bool check_parameter(std::size_t function_scope, const std::string& name, const Context& context) const;
  const std::vector<const source::Call*>& calls_of(std::size_t function_scope) const;
  bool all_arguments(const source::Call& call, std::size_t scope, const Context& context) const;
  const Bindings& bindings_of(std::size_t scope) const;
  bool spend() const;

  const NameResolver& names_;
  std::set<StateRoot> written_roots_;
  mutable std::map<std::size_t, Bindings> bindings_;
  mutable std::optional<std::map<std::size_t, std::vector<const source::Call*>>> call_sites_;
  mutable std::set<std::pair<std::size_t, std::string>> in_progress_;  // names being decided: cycles
  mutable std::size_t work_ = 0;
};

}  // namespace kforge::rules
