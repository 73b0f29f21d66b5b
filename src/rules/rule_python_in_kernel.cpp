#include "rules/rule_python_in_kernel.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Builtins Triton's code generator implements (its builtin_namespace) and harmless ones on
// compile-time values.
constexpr auto kKernelBuiltins = std::to_array<std::string_view>(
    {"range",   "len",     "list",  "tuple",  "float", "int",  "bool",      "isinstance",
     "getattr", "hasattr", "print", "min",    "max",   "abs",  "enumerate", "zip",
     "str",     "repr",    "type",  "divmod", "round", "slice"});

// Modules a kernel body may call into: Triton itself, scalar math on constexprs, and Inductor's library
// of @triton.jit helpers (welford_reduce, its libdevice re-exports) that generated kernels call.
constexpr auto kKernelModules =
    std::to_array<std::string_view>({"triton", "math", "torch._inductor.runtime.triton_helpers"});

// Attributes that reach the interpreter's host arrays or convert a value to Python data.
constexpr auto kHostAttributes =
    std::to_array<std::string_view>({"handle", "data", "numpy", "tolist", "item", "__array__",
                                     "__array_interface__", "astype", "cpu", "__dict__"});

// Syntax Triton's compiler rejects; under the interpreter it would run as Python.
bool unsupported_syntax(source::NodeKind kind) {
  using source::NodeKind;
  switch (kind) {
    case NodeKind::lambda:
    case NodeKind::function_def:
    case NodeKind::class_def:
    case NodeKind::set_comp:
    case NodeKind::dict_comp:
    case NodeKind::generator_exp:
    case NodeKind::dict:
    case NodeKind::set:
    case NodeKind::yield_expr:
    case NodeKind::yield_from:
    case NodeKind::await_expr:
    case NodeKind::import_stmt:
    case NodeKind::import_from:
    case NodeKind::try_stmt:
    case NodeKind::global_stmt:
    case NodeKind::nonlocal_stmt:
    case NodeKind::delete_stmt:
    case NodeKind::named_expr:
      return true;
    default:
      return false;
  }
}

constexpr std::string_view kPythonInKernelWhy =
    ": a kernel body may use only tl.*/triton.* (libdevice included), other @triton.jit functions and the "
    "builtins Triton compiles; under the CPU interpreter anything else runs as Python on the host instead "
    "of as the kernel";

class KernelChecker {
 public:
  KernelChecker(const AnalysisContext& context, std::vector<Finding>& findings, Severity severity)
      : context_(context),
        resolver_(context),
        names_(resolver_.get()),
        sink_(PythonInKernelRule::kId, findings),
        severity_(severity) {}

  void run() {
    const std::vector<FunctionBody> kernels = kernel_bodies(context_, names_);
    for (const FunctionBody& kernel : kernels) {
      kernel_scopes_.insert(kernel.scope);
    }
    for (const FunctionBody& kernel : kernels) {
      walk_body(*kernel.node, [&](const source::Node& node) { check_node(node, kernel); });
    }
  }

 private:
  void check_node(const source::Node& node, const FunctionBody& kernel) {
    if (unsupported_syntax(node.kind())) {
      sink_.add(severity_,
                "`" + std::string(source::to_string(node.kind())) + "` inside the @triton.jit function `" +
                    kernel.qualified_name + "` is Python, not Triton" + std::string(kPythonInKernelWhy),
                node.location);
      return;
    }
    if (const auto* attribute = source::node_cast<source::Attribute>(node);
        attribute != nullptr && in_table(kHostAttributes, attribute->attr) && !is_module_member(*attribute)) {
      sink_.add(severity_,
                "`" + spelling(*attribute) + "` in the @triton.jit function `" + kernel.qualified_name +
                    "` reads a value as host data" + std::string(kPythonInKernelWhy),
                attribute->location);
      return;
    }
    if (const auto* call = source::node_cast<source::Call>(node)) {
      check_call(*call, kernel);
    }
  }

  // `tl.math.cpu`-like chains rooted at a module are Triton's names, not host conversions.
  bool is_module_member(const source::Attribute& attribute) const {
    const std::string origin = names_.resolve(attribute);
    return is_static_origin(origin) &&
           std::any_of(kKernelModules.begin(), kKernelModules.end(),
                       [&origin](std::string_view module) { return in_module(origin, module); });
  }

  void check_call(const source::Call& call, const FunctionBody& kernel) {
    for (const std::size_t callee : names_.callees(call)) {
      if (!kernel_scopes_.contains(callee)) {
        sink_.add(severity_,
                  "`" + spelling(*call.func) + "(...)` in the @triton.jit function `" +
                      kernel.qualified_name + "` calls a plain Python function (not @triton.jit)" +
                      std::string(kPythonInKernelWhy),
                  call.location);
        return;
      }
    }
    for (const source::Expr* value : names_.values_of(*call.func)) {
      if (source::node_cast<source::Lambda>(value) != nullptr) {
        sink_.add(severity_,
                  "`" + spelling(*call.func) + "(...)` in the @triton.jit function `" +
                      kernel.qualified_name + "` calls a Python lambda" + std::string(kPythonInKernelWhy),
                  call.location);
        return;
      }
    }
    const std::string origin = names_.resolve(*call.func);
    if (origin.empty() || origin.find("()") != std::string::npos) {
      return;  // a method of a Triton value (x.to, acc.sum), or a jit function passed in as a constexpr
    }
    if (in_module(origin, "builtins")) {
      if (!in_table(kKernelBuiltins, last_component(origin))) {
        sink_.add(severity_,
                  "`" + spelling(*call.func) + "(...)` in the @triton.jit function `" +
                      kernel.qualified_name + "` is a Python builtin Triton does not compile" +
                      std::string(kPythonInKernelWhy),
                  call.location);
      }
      return;
    }
    const bool allowed =
        std::any_of(kKernelModules.begin(), kKernelModules.end(),
                    [&origin](std::string_view module) { return in_module(origin, module); });
    if (!allowed) {
      sink_.add(severity_,
                describe(*call.func, origin) + " called in the @triton.jit function `" +
                    kernel.qualified_name + "` is not Triton" + std::string(kPythonInKernelWhy),
                call.location);
    }
  }

  const AnalysisContext& context_;
  ResolverHandle resolver_;
  const NameResolver& names_;
  FindingSink sink_;
  Severity severity_;
  std::set<std::size_t> kernel_scopes_;
};

}  // namespace

std::string_view PythonInKernelRule::summary() const {
  return "@triton.jit bodies use only Triton (tl.*, triton.*, libdevice), other jit functions and Triton's "
         "builtins";
}

void PythonInKernelRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  KernelChecker(context, findings, severity_for(context.profile)).run();
}

}  // namespace kforge::rules
