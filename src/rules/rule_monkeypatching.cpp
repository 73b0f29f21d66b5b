#include "rules/rule_monkeypatching.hpp"

#include <array>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Modules that exist to patch other code: their import is reported.
constexpr auto kMonkeypatchingModules = std::to_array<std::string_view>({"unittest.mock", "mock"});

// Global hooks and interposition of torch functions: reported at each use.
constexpr auto kMonkeypatchingMembers = std::to_array<std::string_view>(
    {"unittest.mock", "torch.overrides", "torch.utils._python_dispatch",
     "torch.nn.modules.module.register_module_forward_hook",
     "torch.nn.modules.module.register_module_forward_pre_hook",
     "torch.nn.modules.module.register_module_full_backward_hook",
     // kforge caps the candidate's GPU memory and checks the allocator's peak
     "torch.cuda.set_per_process_memory_fraction", "torch.cuda.memory.set_per_process_memory_fraction",
     "torch.cuda.reset_peak_memory_stats", "torch.cuda.memory.reset_peak_memory_stats",
     "torch.cuda.reset_max_memory_allocated", "torch.cuda.reset_max_memory_cached",
     "torch.cuda.memory.reset_max_memory_allocated", "torch.cuda.memory.reset_max_memory_cached",
     "torch.cuda.memory.change_current_allocator", "torch.cuda.change_current_allocator",
     "torch.cuda.memory.CUDAPluggableAllocator", "torch.cuda.CUDAPluggableAllocator",
     "torch.cuda.memory._set_allocator_settings"});

// The tables hashed once, on first use.
const ForbiddenApi& monkeypatching_api() {
  static const ForbiddenApi api(kMonkeypatchingModules, kMonkeypatchingMembers);
  return api;
}

// setattr-like builtins and their spellings through object/type.
constexpr auto kAttributeSetters = std::to_array<std::string_view>(
    {"builtins.setattr", "builtins.delattr", "builtins.object.__setattr__", "builtins.object.__delattr__",
     "builtins.type.__setattr__", "builtins.type.__delattr__"});

// PyTorch's documented switches, which real kernel files set at import: they choose how PyTorch's own
// matmuls and convolutions run in the candidate's process (where PyTorch compute is rejected anyway) and
// change no code kforge relies on.
constexpr auto kTorchSwitches =
    std::to_array<std::string_view>({"torch.backends.cudnn.allow_tf32", "torch.backends.cudnn.benchmark",
                                     "torch.backends.cuda.matmul.allow_tf32",
                                     "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
                                     "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction"});

// Class-level attributes whose assignment changes another object's type or lookup.
constexpr auto kTypeAttributes =
    std::to_array<std::string_view>({"__class__", "__bases__", "__dict__", "__mro__"});

constexpr std::string_view kMonkeypatchingWhy =
    ": patching modules, foreign classes or builtins changes code that kforge, PyTorch or Triton rely on "
    "(timing, comparison, kernel launch), so the verdict would not measure your kernels; keep state on "
    "your own classes and instances";

class MonkeypatchChecker {
 public:
  MonkeypatchChecker(const AnalysisContext& context, std::vector<Finding>& findings, Severity severity)
      : context_(context),
        resolver_(context),
        names_(resolver_.get()),
        sink_(MonkeypatchingRule::kId, findings),
        severity_(severity) {}

  void run() {
    source::walk(context_.module, [this](const source::Node& node) {
      if (const auto* assign = source::node_cast<source::Assign>(node)) {
        for (const auto& target : assign->targets) {
          check_target(*target, "assigns");
        }
      } else if (const auto* augmented = source::node_cast<source::AugAssign>(node)) {
        check_target(*augmented->target, "updates");
      } else if (const auto* annotated = source::node_cast<source::AnnAssign>(node);
                 annotated != nullptr && annotated->value) {
        check_target(*annotated->target, "assigns");
      } else if (const auto* deletion = source::node_cast<source::Delete>(node)) {
        for (const auto& target : deletion->targets) {
          check_target(*target, "deletes");
        }
      } else if (const auto* call = source::node_cast<source::Call>(node)) {
        check_setattr(*call);
      }
      return source::WalkAction::visit_children;
    });
    scan_forbidden_api(
        context_, names_, monkeypatching_api(),
        [this](const ForbiddenImport& import) {
          sink_.add(severity_, import_subject(import) + std::string(kMonkeypatchingWhy),
                    import.statement->location);
        },
        [this](const source::Expr& use, const Resolved& resolved) {
          sink_.add(severity_,
                    describe(use, resolved.origin) + " intercepts or patches other code" +
                        std::string(kMonkeypatchingWhy),
                    use.location);
        });
  }

 private:
  // What `object` is when it is not the candidate's own: "module `torch.cuda`", "class `torch.Tensor`"...
  std::string foreign_object(const source::Expr& object) const {
    const Resolved resolved = names_.resolve_with_import(object);
    if (in_module(resolved.origin, "os.environ")) {
      return {};  // file-and-network-io reports environment writes
    }
    if (is_static_origin(resolved.origin) &&
        (!resolved.import_origin.empty() || in_module(resolved.origin, "builtins"))) {
      return "`" + resolved.origin + "`";
    }
    if (resolved.origin == "builtins.type()") {
      return "the class of another object";
    }
    for (const source::Expr* value : names_.values_of(object)) {
      if (const auto* call = source::node_cast<source::Call>(value);
          call != nullptr && names_.resolve(*call->func) == "builtins.type") {
        return "the class of another object";
      }
    }
    // x.__class__.attr = ... on anything but self/cls.
    if (const auto* attribute = source::node_cast<source::Attribute>(object);
        attribute != nullptr && in_table(kTypeAttributes, attribute->attr) &&
        !is_receiver(*attribute->value)) {
      return "the class of `" + spelling(*attribute->value) + "`";
    }
    return {};
  }

  bool is_receiver(const source::Expr& expr) const {
    const auto* name = source::node_cast<source::Name>(expr);
    const Scope& scope = names_.scope(names_.scope_of(expr));
    return name != nullptr && scope.method_class && name->id == scope.self_name;
  }

  void check_target(const source::Expr& target, std::string_view verb) {
    if (target.kind() == source::NodeKind::tuple || target.kind() == source::NodeKind::list) {
      for (const source::Node* element : source::children_of(target)) {
        check_target(source::as_expr(*element), verb);
      }
      return;
    }
    if (const auto* starred = source::node_cast<source::Starred>(target)) {
      check_target(*starred->value, verb);
      return;
    }
    const source::Expr* object = nullptr;
    if (const auto* attribute = source::node_cast<source::Attribute>(target)) {
      if (in_table(kTorchSwitches, names_.resolve(target))) {
        return;
      }
      object = attribute->value.get();
      if (attribute->attr == "__class__" && !is_receiver(*object)) {
        report(target, std::string(verb) + " `" + spelling(target) + "`, the class of another object");
        return;
      }
    } else if (const auto* subscript = source::node_cast<source::Subscript>(target)) {
      object = subscript->value.get();
    }
    if (object == nullptr) {
      return;
    }
    const std::string foreign = foreign_object(*object);
    if (!foreign.empty()) {
      report(target, std::string(verb) + " `" + spelling(target) + "` on " + foreign);
    }
  }

  void check_setattr(const source::Call& call) {
    const std::string callee = names_.resolve(*call.func);
    if (!in_table(kAttributeSetters, callee) || call.args.empty()) {
      return;
    }
    const std::string foreign = foreign_object(*call.args[0]);
    if (!foreign.empty()) {
      report(call, "`" + spelling(*call.func) + "(...)` changes an attribute of " + foreign);
    }
  }

  void report(const source::Node& node, const std::string& what) {
    sink_.add(severity_, what + std::string(kMonkeypatchingWhy), node.location);
  }

  const AnalysisContext& context_;
  ResolverHandle resolver_;
  const NameResolver& names_;
  FindingSink sink_;
  Severity severity_;
};

}  // namespace

std::string_view MonkeypatchingRule::summary() const {
  return "no patching of modules, foreign classes or builtins (assignment, del, setattr, unittest.mock)";
}

void MonkeypatchingRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  MonkeypatchChecker(context, findings, severity_for(context.profile)).run();
}

}  // namespace kforge::rules
