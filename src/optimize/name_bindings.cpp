#include "optimize/name_bindings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <iterator>
#include <set>
#include <utility>

namespace kforge::optimize {
namespace {

using source::node_cast;

class LocalScope {
 public:
  explicit LocalScope(const source::FunctionDef& function) : function_(function) {}

  NameBindings collect() {
    for (const auto& parameter : function_.params) {
      other(parameter->name, parameter->location);
    }
    for (const auto& statement : function_.body) {
      source::walk(*statement, [&](const source::Node& node) { return visit(node); });
    }
    for (const auto& name : globals_) {
      bindings_.erase(name);  // the module's name: its module-level binding applies
    }
    return std::move(bindings_);
  }

 private:
  source::WalkAction visit(const source::Node& node) {
    if (const auto* assign = node_cast<source::Assign>(&node)) {
      for (const auto& target : assign->targets) {
        bind_target(*target, assign->value.get(), assign->location);
      }
    } else if (const auto* augmented = node_cast<source::AugAssign>(&node)) {
      bind_target(*augmented->target, nullptr, augmented->location);
    } else if (const auto* annotated = node_cast<source::AnnAssign>(&node);
               annotated != nullptr && annotated->value) {
      bind_target(*annotated->target, annotated->value.get(), annotated->location);
    } else if (const auto* loop = node_cast<source::For>(&node)) {
      bind_target(*loop->target, nullptr, loop->location);
    } else if (const auto* item = node_cast<source::WithItem>(&node);
               item != nullptr && item->optional_vars) {
      bind_target(*item->optional_vars, nullptr, item->location);
    } else if (const auto* walrus = node_cast<source::NamedExpr>(&node)) {
      bind_target(*walrus->target, nullptr, walrus->location);
    } else if (const auto* handler = node_cast<source::ExceptHandler>(&node);
               handler != nullptr && !handler->name.empty()) {
      other(handler->name, handler->location);
    } else if (const auto* alias = node_cast<source::Alias>(&node)) {
      const auto& bound = alias->asname.empty() ? alias->name : alias->asname;
      other(bound.substr(0, bound.find('.')), alias->location);  // `import a.b` binds `a`
    } else if (const auto* global = node_cast<source::Global>(&node)) {
      globals_.insert(global->names.begin(), global->names.end());
    } else if (const auto* nonlocal = node_cast<source::Nonlocal>(&node)) {
      for (const auto& name : nonlocal->names) {
        other(name, nonlocal->location);
      }
    } else if (const auto* nested = node_cast<source::FunctionDef>(&node)) {
      other(nested->name, nested->location);
      return source::WalkAction::skip_children;
    } else if (const auto* owner = node_cast<source::ClassDef>(&node)) {
      other(owner->name, owner->location);
      return source::WalkAction::skip_children;
    } else if (node_cast<source::Lambda>(&node) != nullptr) {
      return source::WalkAction::skip_children;
    }
    return source::WalkAction::visit_children;
  }

  // A name target takes `value`; names inside a tuple, list or starred target take something else.
  void bind_target(const source::Expr& target, const source::Expr* value, source::SourceLocation at) {
    if (const auto* name = node_cast<source::Name>(&target)) {
      record_binding(bindings_, name->id, value,
                     fmt::format("local variable {} of {} at {}", name->id, function_.name, to_string(at)));
    } else if (const auto* tuple = node_cast<source::Tuple>(&target)) {
      for (const auto& element : tuple->elements) {
        bind_target(*element, nullptr, at);
      }
    } else if (const auto* list = node_cast<source::List>(&target)) {
      for (const auto& element : list->elements) {
        bind_target(*element, nullptr, at);
      }
    } else if (const auto* starred = node_cast<source::Starred>(&target)) {
      bind_target(*starred->value, nullptr, at);
    }
  }

  void other(const std::string& name, source::SourceLocation at) {
    record_binding(bindings_, name, nullptr,
                   fmt::format("local name {} of {} at {}", name, function_.name, to_string(at)));
  }

  const source::FunctionDef& function_;
  NameBindings bindings_;
  std::set<std::string> globals_;
};

}  // namespace

std::optional<long long> integer_value(const source::Constant& constant) {
  if (constant.constant_kind != source::ConstantKind::number) {
    return std::nullopt;
  }
  std::string digits;
  std::copy_if(constant.text.begin(), constant.text.end(), std::back_inserter(digits),
               [](char c) { return c != '_'; });
  try {
    std::size_t used = 0;
    const long long value = std::stoll(digits, &used, 0);
    return used == digits.size() ? std::optional<long long>(value) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;  // a float, or out of range
  }
}

void record_binding(NameBindings& bindings, const std::string& name, const source::Expr* value,
                    std::string where) {
  auto& binding = bindings[name];
  ++binding.assignments;
  const auto* constant = node_cast<source::Constant>(value);
  binding.literal = constant != nullptr && integer_value(*constant) ? constant : nullptr;
  binding.where = std::move(where);
}

NameBindings local_bindings(const source::FunctionDef& function) { return LocalScope(function).collect(); }

}  // namespace kforge::optimize
