#include "rules/launch_metadata.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

using source::Expr;
using source::Node;

constexpr int kMaxDepth = 32;
// Bounds the work of one rule run on hostile modules; past it, values count as data (reported).
constexpr std::size_t kMaxWork = 200'000;

// Attributes that describe a tensor or a device, never its values.
constexpr auto kShapeAttributes =
    std::to_array<std::string_view>({"shape", "ndim", "dtype", "device", "is_cuda", "is_cpu", "layout",
                                     "itemsize", "is_sparse", "is_quantized", "requires_grad", "is_leaf"});
// Tensor methods that answer with sizes, strides or flags.
constexpr auto kShapeMethods = std::to_array<std::string_view>(
    {"size", "stride", "dim", "ndimension", "numel", "nelement", "element_size", "is_contiguous",
     "get_device", "storage_offset", "is_floating_point", "is_complex", "is_signed"});
// Methods of dicts, tuples, lists, strings and ints that read without computing on tensors.
constexpr auto kContainerMethods = std::to_array<std::string_view>(
    {"get", "keys", "values", "items", "count", "index", "copy", "format", "join", "split", "strip", "lower",
     "upper", "startswith", "endswith", "replace", "bit_length"});
// Methods that put their arguments into the container they are called on.
constexpr auto kFillingMethods = std::to_array<std::string_view>(
    {"append", "extend", "insert", "update", "setdefault", "add", "__setitem__", "appendleft", "extendleft"});
// Calls whose result describes the device or the process, whatever their arguments.
constexpr auto kQueries = std::to_array<std::string_view>(
    {"torch.cuda.get_device_properties", "torch.cuda.current_device", "torch.cuda.device_count",
     "torch.cuda.get_device_capability", "torch.cuda.get_device_name", "torch.cuda.current_stream",
     "torch.cuda.default_stream", "torch.cuda.is_available", "torch.device", "torch.finfo", "torch.iinfo",
     "torch.get_default_dtype", "torch.cuda.mem_get_info", "os.cpu_count", "os.getenv", "os.environ.get",
     "triton.runtime.driver", "triton.language"});
// Calls that compute metadata from metadata: integer helpers and containers.
constexpr auto kPureCalls = std::to_array<std::string_view>(
    {"triton.cdiv",      "triton.next_power_of_2", "triton.Config",      "math",
     "operator",         "builtins.int",           "builtins.float",     "builtins.bool",
     "builtins.len",     "builtins.min",           "builtins.max",       "builtins.abs",
     "builtins.round",   "builtins.divmod",        "builtins.tuple",     "builtins.list",
     "builtins.dict",    "builtins.set",           "builtins.frozenset", "builtins.range",
     "builtins.sum",     "builtins.sorted",        "builtins.str",       "builtins.repr",
     "builtins.hash",    "builtins.enumerate",     "builtins.zip",       "builtins.reversed",
     "builtins.pow",     "builtins.isinstance",    "builtins.print",     "functools.reduce",
     "itertools.product"});

bool is_function_scope(const Scope& scope) {
  return scope.kind == ScopeKind::function || scope.kind == ScopeKind::lambda;
}

const source::ParameterList* parameters_of(const Node* node) {
  if (const auto* def = source::node_cast<source::FunctionDef>(node)) {
    return &def->params;
  }
  if (const auto* lambda = source::node_cast<source::Lambda>(node)) {
    return &lambda->params;
  }
  return nullptr;
}

// The Name at the bottom of an Attribute/Subscript chain, and the attribute right above it.
std::pair<const source::Name*, const source::Attribute*> chain_root(const Expr& expr) {
  const Expr* current = &expr;
  const source::Attribute* above = nullptr;
  while (true) {
    if (const auto* attribute = source::node_cast<source::Attribute>(current)) {
      above = attribute;
      current = attribute->value.get();
    } else if (const auto* subscript = source::node_cast<source::Subscript>(current)) {
      above = nullptr;
      current = subscript->value.get();
    } else {
      return {source::node_cast<source::Name>(current), above};
    }
  }
}

}  // namespace

LaunchMetadata::LaunchMetadata(const NameResolver& names, std::set<StateRoot> written_roots)
    : names_(names), written_roots_(std::move(written_roots)) {}

std::optional<StateRoot> LaunchMetadata::root_of(const Expr& expr, std::size_t scope,
                                                 const NameResolver& names) {
  const auto [root, above] = chain_root(expr);
  if (root == nullptr) {
    return std::nullopt;
  }
  const Scope& current = names.scope(scope);
  if (current.method_class && root->id == current.self_name) {
    return "self" + std::to_string(*current.method_class) + "." + (above != nullptr ? above->attr : "[]");
  }
  const Binding binding = names.binding_of(root->id, scope);
  if (binding.kind != BindingKind::local || !binding.scope || *binding.scope == scope) {
    return std::nullopt;  // imports, builtins and this function's own locals are not kept state
  }
  return "scope" + std::to_string(*binding.scope) + "." + root->id;
}

bool LaunchMetadata::spend() const { return ++work_ <= kMaxWork; }

bool LaunchMetadata::is_metadata(const Expr& value, std::size_t scope, bool adapting) const {
  Context context;
  context.adapting = adapting;
  return check(value, scope, context);
}

bool LaunchMetadata::returns_metadata(std::size_t function_scope) const {
  Context context;
  context.parameter_scopes.insert(function_scope);
  return callee_returns_metadata(function_scope, context);
}

bool LaunchMetadata::callee_returns_metadata(std::size_t callee, const Context& context) const {
  const Node* function = names_.scope(callee).node;
  if (const auto* lambda = source::node_cast<source::Lambda>(function)) {
    return lambda->body && check(*lambda->body, callee, context);
  }
  bool all = true;
  walk_body(*function, [&](const Node& node) {
    if (const auto* result = source::node_cast<source::Return>(node); all && result != nullptr) {
      all = result->value == nullptr || check(*result->value, names_.scope_of(*result->value), context);
    }
  });
  return all;
}

bool LaunchMetadata::check(const Expr& expr, std::size_t scope, Context context) const {
  if (!spend() || ++context.depth > kMaxDepth) {
    return false;
  }
  switch (expr.kind()) {
    case source::NodeKind::constant:
    case source::NodeKind::lambda:
      return true;
    case source::NodeKind::string: {
      const auto& literal = *source::node_cast<source::StringLiteral>(expr);
      return std::all_of(literal.fstring_values.begin(), literal.fstring_values.end(),
                         [&](const source::ExprPtr& part) { return check(*part, scope, context); });
    }
    case source::NodeKind::tuple:
    case source::NodeKind::list:
    case source::NodeKind::set:
    case source::NodeKind::dict:
    case source::NodeKind::starred:
    case source::NodeKind::slice: {
      const auto children = source::children_of(expr);
      return std::all_of(children.begin(), children.end(),
                         [&](const Node* child) { return check(source::as_expr(*child), scope, context); });
    }
    case source::NodeKind::named_expr:
      return check(*source::node_cast<source::NamedExpr>(expr)->value, scope, context);
    case source::NodeKind::unary_op:
    case source::NodeKind::binary_op:
    case source::NodeKind::bool_op:
    case source::NodeKind::compare:
    case source::NodeKind::if_exp: {
      context.in_operation = true;  // a counter `n + 1` or a choice made on stored state computes with it
      const auto children = source::children_of(expr);
      return std::all_of(children.begin(), children.end(),
                         [&](const Node* child) { return check(source::as_expr(*child), scope, context); });
    }
    case source::NodeKind::list_comp:
    case source::NodeKind::set_comp:
    case source::NodeKind::dict_comp:
    case source::NodeKind::generator_exp: {
      context.in_operation = true;
      bool all = true;
      for (const Node* child : source::children_of(expr)) {
        if (const auto* generator = source::node_cast<source::Comprehension>(child)) {
          all = all && check(*generator->iter, scope, context) &&
                std::all_of(generator->ifs.begin(), generator->ifs.end(),
                            [&](const source::ExprPtr& test) { return check(*test, scope, context); });
        } else {
          all = all && check(source::as_expr(*child), scope, context);
        }
      }
      return all;
    }
    case source::NodeKind::attribute: {
      const auto& attribute = *source::node_cast<source::Attribute>(expr);
      if (in_table(kShapeAttributes, attribute.attr)) {
        return true;
      }
      const std::string origin = names_.resolve(expr);
      if (!origin.empty() && is_static_origin(origin)) {
        return true;  // a module, function, class or constant reached by name (`torch.float32`)
      }
      const auto* receiver = source::node_cast<source::Name>(attribute.value.get());
      const Scope& current = names_.scope(scope);
      if (receiver != nullptr && current.method_class && receiver->id == current.self_name) {
        const auto root = root_of(expr, scope, names_);
        if (root && written_roots_.contains(*root)) {
          return !context.in_operation || context.adapting;
        }
        return check_instance_attribute(*current.method_class, attribute.attr, context);
      }
      return check(*attribute.value, scope, context);
    }
    case source::NodeKind::subscript: {
      const auto& subscript = *source::node_cast<source::Subscript>(expr);
      Context key = context;
      key.in_operation = true;
      return check(*subscript.value, scope, context) && check(*subscript.slice, scope, key);
    }
    case source::NodeKind::call:
      return check_call(*source::node_cast<source::Call>(expr), scope, context);
    case source::NodeKind::name:
      return check_name(*source::node_cast<source::Name>(expr), scope, context);
    default:
      return false;
  }
}

bool LaunchMetadata::all_arguments(const source::Call& call, std::size_t scope,
                                   const Context& context) const {
  Context arguments = context;
  arguments.in_operation = true;
  return std::all_of(call.args.begin(), call.args.end(),
                     [&](const source::ExprPtr& arg) { return check(*arg, scope, arguments); }) &&
         std::all_of(call.keywords.begin(), call.keywords.end(),
                     [&](const auto& keyword) { return check(*keyword->value, scope, arguments); });
}

bool LaunchMetadata::check_call(const source::Call& call, std::size_t scope, const Context& context) const {
  const std::string origin = names_.resolve(*call.func);
  if (!origin.empty() && is_static_origin(origin)) {
    if (module_match(origin, kQueries)) {
      return true;
    }
    if (module_match(origin, kPureCalls)) {
      return all_arguments(call, scope, context);
    }
  }
  const auto* method = source::node_cast<source::Attribute>(call.func.get());
  if (method != nullptr && in_table(kShapeMethods, method->attr)) {
    return true;
  }
  // The candidate's own functions: metadata when what they return is, given these arguments.
  const auto callees = names_.callees(call);
  if (!callees.empty()) {
    if (!all_arguments(call, scope, context)) {
      return false;
    }
    Context inner = context;
    inner.in_operation = false;
    return std::all_of(callees.begin(), callees.end(), [&](std::size_t callee) {
      const Scope& info = names_.scope(callee);
      if (info.qualified_name.ends_with("__init__")) {
        return true;  // an instance of the candidate's class, built from metadata
      }
      inner.parameter_scopes.insert(callee);
      return callee_returns_metadata(callee, inner);
    });
  }
  // A method of a container or string of metadata (`props.get("sm")`, `key.count(1)`, `cache.get(key)`).
  return method != nullptr && in_table(kContainerMethods, method->attr) &&
         check(*method->value, scope, context) && all_arguments(call, scope, context);
}

bool LaunchMetadata::check_instance_attribute(std::size_t class_scope, const std::string& attr,
                                              const Context& context) const {
  const std::string key = "." + attr;
  if (in_progress_.contains({class_scope, key})) {
    return true;
  }
  std::vector<Source> sources;
  for (const std::size_t owner : names_.class_hierarchy(class_scope)) {
    const Scope& info = names_.scope(owner);
    if (const auto found = info.instance_attributes.find(attr); found != info.instance_attributes.end()) {
      for (const auto& [value, value_scope] : found->second) {
        sources.push_back({value, false});
      }
    }
    if (const auto found = bindings_of(owner).sources.find(attr); found != bindings_of(owner).sources.end()) {
      sources.insert(sources.end(), found->second.begin(), found->second.end());
    }
  }
  if (sources.empty()) {
    return false;  // set outside the candidate's code (nn.Module's own state) or nowhere we can see
  }
  in_progress_.insert({class_scope, key});
  Context inner = context;
  inner.in_operation = false;
  const bool result = check_sources(sources, inner);
  in_progress_.erase({class_scope, key});
  return result;
}

bool LaunchMetadata::check_sources(const std::vector<Source>& sources, const Context& context) const {
  return std::all_of(sources.begin(), sources.end(), [&](const Source& source) {
    return check(*source.value, names_.scope_of(*source.value), context);
  });
}

bool LaunchMetadata::check_name(const source::Name& name, std::size_t scope, const Context& context) const {
  const Binding binding = names_.binding_of(name.id, scope);
  if (binding.kind == BindingKind::import || binding.kind == BindingKind::builtin) {
    return true;  // a module or library object by name; calling it is judged in check_call
  }
  if (binding.kind != BindingKind::local || !binding.scope) {
    return false;
  }
  const std::size_t owner = *binding.scope;
  if (owner != scope && written_roots_.contains("scope" + std::to_string(owner) + "." + name.id)) {
    return !context.in_operation || context.adapting;
  }
  const Scope& info = names_.scope(owner);
  if (info.functions.contains(name.id) || info.classes.contains(name.id) || info.imports.contains(name.id)) {
    return true;
  }
  const Bindings& bindings = bindings_of(owner);
  if (bindings.parameters.contains(name.id)) {
    // Memoised functions' keys and __init__'s construction constants (get_init_inputs()) are metadata.
    if (context.parameter_scopes.contains(owner) || info.qualified_name.ends_with("__init__")) {
      return true;
    }
    if (!in_progress_.insert({owner, name.id}).second) {
      return true;
    }
    const bool result = check_parameter(owner, name.id, context);
    in_progress_.erase({owner, name.id});
    return result;
  }
  const auto found = bindings.sources.find(name.id);
  if (found == bindings.sources.end() || bindings.opaque.contains(name.id)) {
    return false;
  }
  if (!in_progress_.insert({owner, name.id}).second) {
    return true;  // a cycle (`n = n // 2` in a loop): decided by the other sources
  }
  const bool result = check_sources(found->second, context);
  in_progress_.erase({owner, name.id});
  return result;
}

const std::vector<const source::Call*>& LaunchMetadata::calls_of(std::size_t function_scope) const {
  if (!call_sites_) {
    call_sites_.emplace();
    source::walk(*names_.scope(0).node, [&](const Node& node) {
      if (const auto* call = source::node_cast<source::Call>(node); call != nullptr && spend()) {
        for (const std::size_t callee : names_.callees(*call)) {
          (*call_sites_)[callee].push_back(call);
        }
      }
      return source::WalkAction::visit_children;
    });
  }
  static const std::vector<const source::Call*> kNone;
  const auto found = call_sites_->find(function_scope);
  return found != call_sites_->end() ? found->second : kNone;
}

bool LaunchMetadata::check_parameter(std::size_t function_scope, const std::string& name,
                                     const Context& context) const {
  const Scope& function = names_.scope(function_scope);
  const auto* params = parameters_of(function.node);
  const auto& calls = calls_of(function_scope);
  if (params == nullptr || calls.empty()) {
    return false;  // never called by name (a callback): its arguments are unknown
  }
  const auto position =
      std::find_if(params->begin(), params->end(), [&](const auto& p) { return p->name == name; });
  const auto& param = **position;
  if (param.parameter_kind == source::ParameterKind::var_positional ||
      param.parameter_kind == source::ParameterKind::var_keyword) {
    return false;
  }
  auto index = static_cast<std::size_t>(position - params->begin());
  Context arguments = context;
  arguments.in_operation = true;
  return std::all_of(calls.begin(), calls.end(), [&](const source::Call* call) {
    const std::size_t scope = names_.scope_of(*call);
    for (const auto& keyword : call->keywords) {
      if (keyword->name == name) {
        return check(*keyword->value, scope, arguments);
      }
      if (keyword->name.empty()) {
        return false;  // **kwargs at the call site
      }
    }
    // `obj.method(a)` passes `a` as the parameter after self.
    const bool bound_method = function.method_class && !params->empty() &&
                              (*params)[0]->name == function.self_name &&
                              call->func->kind() == source::NodeKind::attribute;
    const std::size_t shift = bound_method ? 1 : 0;
    if (index < shift) {
      return true;  // the receiver itself
    }
    const std::size_t at = index - shift;
    if (std::any_of(call->args.begin(), call->args.end(),
                    [](const auto& arg) { return arg->kind() == source::NodeKind::starred; })) {
      return false;
    }
    if (at < call->args.size()) {
      return check(*call->args[at], scope, arguments);
    }
    return param.default_value != nullptr &&
           check(*param.default_value, names_.scope_of(*param.default_value), arguments);
  });
}

const LaunchMetadata::Bindings& LaunchMetadata::bindings_of(std::size_t scope) const {
  if (const auto found = bindings_.find(scope); found != bindings_.end()) {
    return found->second;
  }
  Bindings& bindings = bindings_[scope];
  const Node* owner = names_.scope(scope).node;
  if (const auto* params = parameters_of(owner)) {
    for (const auto& param : *params) {
      bindings.parameters.insert(param->name);
    }
  }
  // Binds `target` to `value` (or to one element of it) when the target is a plain name of this scope.
  const auto bind = [&](const Expr& target, const Expr* value, bool element, auto& self) -> void {
    if (const auto* name = source::node_cast<source::Name>(target)) {
      if (names_.scope_of(target) != scope) {
        return;
      }
      if (value == nullptr) {
        bindings.opaque.insert(name->id);
      } else {
        bindings.sources[name->id].push_back({value, element});
      }
    } else if (const auto* starred = source::node_cast<source::Starred>(target)) {
      self(*starred->value, value, true, self);
    } else if (target.kind() == source::NodeKind::tuple || target.kind() == source::NodeKind::list) {
      for (const Node* child : source::children_of(target)) {
        self(source::as_expr(*child), value, true, self);  // `m, n = x.shape`: each takes an element
      }
    }
  };
  // `table[k] = v`, `cfg.x = v`, `items.append(v)`: what goes into a container this scope names is
  // part of its value.
  const auto fill = [&](const Expr& container, const Expr& value) {
    const source::Name* root = chain_root(container).first;
    if (root != nullptr && names_.scope_of(*root) == scope &&
        names_.binding_of(root->id, scope).scope == std::optional<std::size_t>(scope)) {
      bindings.sources[root->id].push_back({&value, false});
    }
  };
  const auto visit = [&](const Node& node) {
    if (const auto* assign = source::node_cast<source::Assign>(node)) {
      for (const auto& target : assign->targets) {
        bind(*target, assign->value.get(), false, bind);
        if (target->kind() == source::NodeKind::subscript || target->kind() == source::NodeKind::attribute) {
          fill(*target, *assign->value);
        }
      }
    } else if (const auto* call = source::node_cast<source::Call>(node)) {
      const auto* method = source::node_cast<source::Attribute>(call->func.get());
      if (method != nullptr && in_table(kFillingMethods, method->attr)) {
        for (const auto& arg : call->args) {
          fill(*method->value, *arg);
        }
      }
    } else if (const auto* annotated = source::node_cast<source::AnnAssign>(node)) {
      if (annotated->value) {
        bind(*annotated->target, annotated->value.get(), false, bind);
      }
    } else if (const auto* augmented = source::node_cast<source::AugAssign>(node)) {
      bind(*augmented->target, augmented->value.get(), false, bind);
    } else if (const auto* named = source::node_cast<source::NamedExpr>(node)) {
      bind(*named->target, named->value.get(), false, bind);
    } else if (const auto* loop = source::node_cast<source::For>(node)) {
      bind(*loop->target, loop->iter.get(), true, bind);
    } else if (const auto* generator = source::node_cast<source::Comprehension>(node)) {
      bind(*generator->target, generator->iter.get(), true, bind);
    } else if (const auto* item = source::node_cast<source::WithItem>(node)) {
      if (item->optional_vars) {
        bind(*item->optional_vars, item->context_expr.get(), false, bind);
      }
    }
  };
  if (owner != nullptr && is_function_scope(names_.scope(scope))) {
    walk_body(*owner, visit);
  } else if (owner != nullptr) {  // the module or a class body: its statements, not nested bodies
    source::walk(*owner, [&](const Node& node) {
      visit(node);
      const bool nested = &node != owner && (node.kind() == source::NodeKind::function_def ||
                                             node.kind() == source::NodeKind::class_def ||
                                             node.kind() == source::NodeKind::lambda);
      return nested ? source::WalkAction::skip_children : source::WalkAction::visit_children;
    });
  }
  return bindings;
}

}  // namespace kforge::rules
