#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "source/python_ast.hpp"

namespace kforge::optimize {

// What a name is bound to, for the knobs: its integer literal when it is bound once, as
// `NAME = <integer literal>` (a module constant, a class or instance attribute, a local variable).
struct NameBinding {
  const source::Constant* literal = nullptr;  // null: bound to something else, or more than once
  int assignments = 0;
  std::string where;  // "local variable BLOCK_M of attention at 31:5"
};
using NameBindings = std::map<std::string, NameBinding, std::less<>>;

// The value of an integer literal (`1024`, `0x400`, `1_024`); nullopt for anything else.
std::optional<long long> integer_value(const source::Constant& constant);

// Counts one more binding of `name` to `value` (null: bound other than by a plain assignment).
void record_binding(NameBindings& bindings, const std::string& name, const source::Expr* value,
                    std::string where);

// Every name `function` binds in its own scope: its parameters and the targets of its assignments,
// loops, `with`, `except`, imports, walrus and nested definitions (whose bodies are scopes of their
// own); not the names it declares `global` (those are the module's). A launch inside it that passes
// such a name reads this binding, not a module constant's.
NameBindings local_bindings(const source::FunctionDef& function);

}  // namespace kforge::optimize
