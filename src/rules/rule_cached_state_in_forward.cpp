#include "rules/rule_cached_state_in_forward.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <set>
#include <string>

#include "rules/launch_metadata.hpp"
#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Container methods that mutate their receiver.
constexpr auto kMutatingMethods =
    std::to_array<std::string_view>({"append", "extend", "insert", "update", "setdefault", "__setitem__",
                                     "__delitem__", "pop", "popitem", "clear", "appendleft", "extendleft"});

// nn.Module methods that add state to the instance.
constexpr auto kRegisteringMethods = std::to_array<std::string_view>(
    {"register_buffer", "register_parameter", "add_module", "register_module"});

// Memoising decorators and wrappers.
constexpr auto kCaches =
    std::to_array<std::string_view>({"functools.lru_cache", "functools.cache", "functools.cached_property",
                                     "cachetools", "methodtools.lru_cache"});

constexpr std::string_view kCachedStateInForwardWhy =
    ": outputs or work cached across forward calls make timing measure nothing (kforge calls forward many "
    "times, often on the same inputs); recompute everything from the inputs on each call (allocate "
    "outputs and workspaces in forward, keep only parameters and constants from __init__; launch "
    "metadata such as grids, block sizes, the SM count or the stream handle may be cached)";

constexpr std::string_view kOnInput =
    ", state kept on one of forward's input tensors (an answer or a call count there tells repeated, timed "
    "calls from checked ones)";

class CachedStateChecker {
 public:
  CachedStateChecker(const AnalysisContext& context, std::vector<Finding>& findings, Severity severity)
      : context_(context),
        resolver_(context),
        names_(resolver_.get()),
        sink_(CachedStateInForwardRule::kId, findings),
        severity_(severity) {
    for (const FunctionBody& body : reachable_bodies(context, names_)) {
      reachable_.insert(body.scope);
    }
    metadata_.emplace(names_, written_roots(context));
  }

  void run() {
    for (const FunctionBody& body : reachable_bodies(context_, names_)) {
      if (const auto* def = source::node_cast<source::FunctionDef>(body.node)) {
        check_decorators(*def, body.qualified_name);
        if (def->name == "__init__") {
          continue;  // building the instance is what __init__ is for
        }
      }
      walk_body(*body.node, [&](const source::Node& node) { check_node(node, body); });
    }
    check_model_methods();
    check_cache_wrappers();
  }

 private:
  // State that forward's call graph writes (outside __init__): reading it back is metadata only when the
  // value is moved whole, not computed with (a counter reads what it updates).
  std::set<StateRoot> written_roots(const AnalysisContext& context) const {
    std::set<StateRoot> roots;
    const auto note = [&](const source::Expr& target, std::size_t scope) {
      if (const auto root = LaunchMetadata::root_of(target, scope, names_)) {
        roots.insert(*root);
      }
    };
    for (const FunctionBody& body : reachable_bodies(context, names_)) {
      if (const auto* def = source::node_cast<source::FunctionDef>(body.node);
          def != nullptr && def->name == "__init__") {
        continue;
      }
      walk_body(*body.node, [&](const source::Node& node) {
        if (const auto* assign = source::node_cast<source::Assign>(node)) {
          for (const auto& target : assign->targets) {
            note(*target, names_.scope_of(*target));
          }
        } else if (const auto* augmented = source::node_cast<source::AugAssign>(node)) {
          note(*augmented->target, names_.scope_of(*augmented->target));
        } else if (const auto* call = source::node_cast<source::Call>(node)) {
          if (const auto* method = source::node_cast<source::Attribute>(call->func.get());
              method != nullptr && in_table(kMutatingMethods, method->attr)) {
            note(*method->value, names_.scope_of(*call));
          }
        }
      });
    }
    return roots;
  }

  void check_node(const source::Node& node, const FunctionBody& body) {
    if (const auto* assign = source::node_cast<source::Assign>(node)) {
      for (const auto& target : assign->targets) {
        check_target(*target, assign->value.get(), body, "assigns");
      }
    } else if (const auto* augmented = source::node_cast<source::AugAssign>(node)) {
      // Reads what it writes: a counter, unless an except handler adapts launch metadata (`block //= 2`).
      check_target(*augmented->target, in_except_handler(node) ? augmented->value.get() : nullptr, body,
                   "updates");
    } else if (const auto* annotated = source::node_cast<source::AnnAssign>(node);
               annotated != nullptr && annotated->value) {
      check_target(*annotated->target, annotated->value.get(), body, "assigns");
    } else if (const auto* named = source::node_cast<source::NamedExpr>(node)) {
      check_target(*named->target, named->value.get(), body, "assigns");
    } else if (const auto* loop = source::node_cast<source::For>(node)) {
      check_target(*loop->target, nullptr, body, "assigns");
    } else if (const auto* call = source::node_cast<source::Call>(node)) {
      check_call(*call, body);
    }
  }

  // Whether `value` (evaluated where `node` is) is launch metadata that may be kept across calls.
  bool keeps_metadata(const source::Expr* value, const source::Node& node) const {
    return value != nullptr && metadata_->is_metadata(*value, names_.scope_of(node), in_except_handler(node));
  }

  // Whether `node` lies in an except handler of the function it belongs to.
  bool in_except_handler(const source::Node& node) const {
    for (const source::Node* current = names_.parent(node); current != nullptr;
         current = names_.parent(*current)) {
      if (current->kind() == source::NodeKind::except_handler) {
        return true;
      }
      if (current->kind() == source::NodeKind::function_def || current->kind() == source::NodeKind::lambda) {
        return false;
      }
    }
    return false;
  }

  // Where the state that `root` names lives, if it outlives one forward call: "the module
  // instance", "module-level `CACHE`", "`cache`, a variable of `make_step`".
  std::string persistent_owner(const source::Name& root, std::size_t scope) const {
    const Scope& current = names_.scope(scope);
    if (current.method_class && root.id == current.self_name) {
      return "the module instance `" + root.id + "`";
    }
    const Binding binding = names_.binding_of(root.id, scope);
    if (binding.kind != BindingKind::local) {
      return {};  // imports belong to monkeypatching; builtins and unknown names are not state
    }
    if (*binding.scope == 0) {
      return "module-level `" + root.id + "`";
    }
    const Scope& owner = names_.scope(*binding.scope);
    const bool per_call = owner.kind == ScopeKind::class_body || reachable_.contains(*binding.scope);
    return per_call ? std::string() : "`" + root.id + "`, a variable of `" + owner.qualified_name + "`";
  }

  static const source::Name* root_name(const source::Expr& expr) {
    const source::Expr* current = &expr;
    while (true) {
      if (const auto* attribute = source::node_cast<source::Attribute>(current)) {
        current = attribute->value.get();
      } else if (const auto* subscript = source::node_cast<source::Subscript>(current)) {
        current = subscript->value.get();
      } else {
        return source::node_cast<source::Name>(current);
      }
    }
  }

  void check_target(const source::Expr& target, const source::Expr* value, const FunctionBody& body,
                    std::string_view verb) {
    if (target.kind() == source::NodeKind::tuple || target.kind() == source::NodeKind::list) {
      for (const source::Node* element : source::children_of(target)) {
        check_target(source::as_expr(*element), value, body, verb);  // each takes part of the value
      }
      return;
    }
    if (const auto* starred = source::node_cast<source::Starred>(target)) {
      check_target(*starred->value, value, body, verb);
      return;
    }
    // Anything kept on an input object tells calls apart, metadata or not (the launch-metadata exception
    // is for ModelNew's and the module's own state).
    const auto* attribute_target = source::node_cast<source::Attribute>(target);
    const bool on_input = attribute_target != nullptr && is_forward_input(*attribute_target->value, body);
    if (!on_input && keeps_metadata(value, target)) {
      return;
    }
    const std::size_t scope = names_.scope_of(target);
    if (const auto* name = source::node_cast<source::Name>(target)) {
      const Scope& current = names_.scope(scope);
      const bool rebinds_outer = current.globals.contains(name->id) || current.nonlocals.contains(name->id);
      const std::string owner = rebinds_outer ? persistent_owner(*name, scope) : std::string();
      if (!owner.empty()) {
        report(target,
               std::string(verb) + " " + owner + " (declared " +
                   (current.globals.contains(name->id) ? "global" : "nonlocal") + ")",
               body);
      }
      return;
    }
    const source::Name* root = root_name(target);
    if (root == nullptr) {
      return;
    }
    const std::string owner = persistent_owner(*root, scope);
    if (!owner.empty()) {
      report(target, std::string(verb) + " `" + spelling(target) + "`, state of " + owner, body);
    } else if (on_input) {
      report(target, std::string(verb) + " `" + spelling(target) + "`" + std::string(kOnInput), body);
    }
  }

  // A parameter of ModelNew.forward other than self: the caller's input object, which outlives the call.
  static bool is_forward_input(const source::Expr& expr, const FunctionBody& body) {
    const auto* name = source::node_cast<source::Name>(expr);
    const auto* def = source::node_cast<source::FunctionDef>(body.node);
    if (name == nullptr || def == nullptr || def->name != "forward" ||
        !body.qualified_name.ends_with(".forward")) {
      return false;
    }
    for (std::size_t i = 1; i < def->params.size(); ++i) {
      if (def->params[i]->name == name->id) {
        return true;
      }
    }
    return false;
  }

  void check_call(const source::Call& call, const FunctionBody& body) {
    const std::size_t scope = names_.scope_of(call);
    const std::string callee = names_.resolve(*call.func);
    if (callee == "builtins.setattr" && !call.args.empty()) {
      if (call.args.size() == 3 && !is_forward_input(*call.args[0], body) &&
          keeps_metadata(call.args[2].get(), call)) {
        return;
      }
      if (const auto* root = root_name(*call.args[0])) {
        const std::string owner = persistent_owner(*root, scope);
        if (!owner.empty()) {
          report(call, "`setattr(...)` changes state of " + owner, body);
        } else if (is_forward_input(*call.args[0], body)) {
          report(call, "`setattr(...)` on `" + root->id + "`" + std::string(kOnInput), body);
        }
      }
      return;
    }
    const auto* method = source::node_cast<source::Attribute>(call.func.get());
    if (method == nullptr) {
      return;
    }
    const source::Name* root = root_name(*method->value);
    if (root == nullptr) {
      return;
    }
    const bool on_self_itself = source::node_cast<source::Name>(method->value.get()) != nullptr;
    const bool registers = on_self_itself && in_table(kRegisteringMethods, method->attr);
    const bool mutates = registers || in_table(kMutatingMethods, method->attr);
    if (mutates && !registers && arguments_are_metadata(call)) {
      return;  // a grid cache's setdefault/update/pop of launch metadata
    }
    const std::string owner = mutates ? persistent_owner(*root, scope) : std::string();
    if (!owner.empty()) {
      report(call, "`" + spelling(*call.func) + "(...)` mutates state of " + owner, body);
    }
  }

  bool arguments_are_metadata(const source::Call& call) const {
    return std::all_of(call.args.begin(), call.args.end(),
                       [&](const source::ExprPtr& arg) { return keeps_metadata(arg.get(), call); }) &&
           std::all_of(call.keywords.begin(), call.keywords.end(),
                       [&](const auto& keyword) { return keeps_metadata(keyword->value.get(), call); });
  }

  // A memoised function whose every return is launch metadata (the SM count, a grid for a size).
  bool memoises_metadata(const source::Node& function) const {
    const auto scope = names_.scope_opened_by(function);
    return scope && metadata_->returns_metadata(*scope);
  }

  bool is_cache(const source::Expr& expr) const {
    const auto* call = source::node_cast<source::Call>(expr);
    return module_match(names_.resolve(call != nullptr ? *call->func : expr), kCaches).has_value();
  }

  void check_decorators(const source::FunctionDef& def, std::string_view qualified_name) {
    for (const auto& decorator : def.decorators) {
      if (is_cache(*decorator) && !memoises_metadata(def)) {
        sink_.add(severity_,
                  "`@" + spelling(*decorator) + "` memoises `" + std::string(qualified_name) +
                      "`, which runs on the path from ModelNew.forward" +
                      std::string(kCachedStateInForwardWhy),
                  decorator->location);
      }
    }
  }

  // Any method of ModelNew may be called by the harness, reachable or not.
  void check_model_methods() {
    if (!context_.index.model || context_.index.model->definition == nullptr) {
      return;
    }
    const auto scope = names_.scope_opened_by(*context_.index.model->definition);
    for (const auto& statement : context_.index.model->definition->body) {
      if (const auto* def = source::node_cast<source::FunctionDef>(*statement);
          def != nullptr && scope && !reachable_.contains(names_.scope_opened_by(*def).value_or(0))) {
        check_decorators(*def, names_.scope(*scope).qualified_name + "." + def->name);
      }
    }
  }

  // The parent chain of a decorator expression ends in the decorated def or class.
  bool is_in_decorator(const source::Node& node) const {
    const source::Node* current = &node;
    for (const source::Node* parent = names_.parent(*current); parent != nullptr;
         current = parent, parent = names_.parent(*current)) {
      if (const auto* def = source::node_cast<source::FunctionDef>(parent)) {
        return std::any_of(
            def->decorators.begin(), def->decorators.end(),
            [current](const source::ExprPtr& decorator) { return decorator.get() == current; });
      }
      if (parent->kind() != source::NodeKind::call && parent->kind() != source::NodeKind::attribute) {
        return false;
      }
    }
    return false;
  }

  // functools.lru_cache(...)(f) and friends used as plain calls, anywhere.
  void check_cache_wrappers() {
    source::walk(context_.module, [&](const source::Node& node) {
      if (is_reference_root(node, names_) && !is_in_decorator(node)) {
        const auto& reference = source::as_expr(node);
        const std::string origin = names_.resolve(reference);
        if (module_match(origin, kCaches) && !wraps_metadata_function(reference)) {
          sink_.add(
              severity_,
              describe(reference, origin) + " memoises a function" + std::string(kCachedStateInForwardWhy),
              reference.location);
        }
      }
      return source::WalkAction::visit_children;
    });
  }

  // `functools.lru_cache(...)(f)` / `functools.cache(f)` where f is a function of the candidate that
  // returns launch metadata.
  bool wraps_metadata_function(const source::Expr& reference) const {
    const source::Node* parent = names_.parent(reference);
    const auto* call = source::node_cast<source::Call>(parent);
    if (call == nullptr || call->func.get() != &reference) {
      return false;
    }
    const auto* outer = source::node_cast<source::Call>(names_.parent(*call));
    const auto* wrapped_call = outer != nullptr && outer->func.get() == call ? outer : call;
    if (wrapped_call->args.size() != 1) {
      return false;
    }
    const auto* name = source::node_cast<source::Name>(wrapped_call->args[0].get());
    if (name == nullptr) {
      return false;
    }
    const Binding binding = names_.binding_of(name->id, names_.scope_of(*name));
    if (binding.kind != BindingKind::local || !binding.scope) {
      return false;
    }
    const auto function = names_.scope(*binding.scope).functions.find(name->id);
    return function != names_.scope(*binding.scope).functions.end() &&
           metadata_->returns_metadata(function->second);
  }

  void report(const source::Node& node, const std::string& what, const FunctionBody& body) {
    sink_.add(severity_, what + " in `" + body.qualified_name + "`" + std::string(kCachedStateInForwardWhy),
              node.location);
  }

  const AnalysisContext& context_;
  ResolverHandle resolver_;
  const NameResolver& names_;
  FindingSink sink_;
  Severity severity_;
  std::set<std::size_t> reachable_;
  std::optional<LaunchMetadata> metadata_;
};

}  // namespace

std::string_view CachedStateInForwardRule::summary() const {
  return "no state kept across forward calls (self attributes, module-level objects, globals, caches)";
}

void CachedStateInForwardRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  CachedStateChecker(context, findings, severity_for(context.profile)).run();
}

}  // namespace kforge::rules
