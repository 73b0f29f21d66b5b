#include "rules/rule_dispatch_interception.hpp"

#include <array>
#include <optional>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Names that intercept or switch off PyTorch's dispatch (or kforge's profiler view of it), matched as
// any component of a dotted name, wherever the module that exports them is.
constexpr auto kInterceptionNames = std::to_array<std::string_view>({
    // the mode classes and the modules that define them
    "TorchDispatchMode",
    "TorchFunctionMode",
    "BaseTorchFunctionMode",
    "_python_dispatch",
    "FakeTensorMode",
    "FlopCounterMode",
    "DebugMode",
    "CrossRefFakeMode",
    "FunctionalTensorMode",
    "_subclasses",
    "_library",
    // the mode stacks
    "_disable_current_modes",
    "_push_mode",
    "_pop_mode",
    "_pop_mode_temporarily",
    "_get_current_dispatch_mode",
    "_get_current_dispatch_mode_stack",
    "_len_torch_dispatch_stack",
    "_len_torch_function_stack",
    "_get_dispatch_stack_at",
    "_get_function_stack_at",
    "_push_on_torch_dispatch_stack",
    "_pop_torch_dispatch_stack",
    "_push_on_torch_function_stack",
    "_pop_torch_function_stack",
    "_set_torch_function_mode",
    "_get_torch_function_mode",
    "_set_dispatch_mode",
    "_get_dispatch_mode",
    "_unset_dispatch_mode",
    "_is_torch_function_mode_enabled",
    // switching dispatch or torch-function handling off, dispatch-key guards
    "_DisableTorchDispatch",
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "_EnableTorchFunction",
    "_disabled_torch_dispatch_impl",
    "enable_python_dispatcher",
    "_python_dispatcher",
    "_DisablePythonDispatcher",
    "_EnablePythonDispatcher",
    "_ExcludeDispatchKeyGuard",
    "_IncludeDispatchKeyGuard",
    "_ForceDispatchKeyGuard",
    "_AutoDispatchBelowAutograd",
    "_RestorePythonTLSSnapshot",
    "_dispatch_tls_set_dispatch_key_excluded",
    // kforge's profiler view of ATen
    "_disable_profiler",
    "_disable_profiler_legacy",
    "_enable_profiler",
    "_enable_profiler_legacy",
    "_prepare_profiler",
    "_set_record_function_enabled",
    "_RecordFunctionFast",
    "_kineto_step",
});

constexpr std::string_view kDispatchInterceptionWhy =
    ": a dispatch or torch-function mode runs the candidate's code inside every tensor operation "
    "(kforge's own handling of the outputs included) and can switch off kforge's recorder; a Triton "
    "candidate needs none of it";

// The first component of a dotted name that is an interception name, if any.
std::optional<std::string_view> interception_component(std::string_view dotted) {
  while (!dotted.empty()) {
    const std::size_t dot = dotted.find('.');
    const std::string_view part = dotted.substr(0, dot);
    for (const std::string_view name : kInterceptionNames) {
      if (part == name) {
        return name;
      }
    }
    if (dot == std::string_view::npos) {
      break;
    }
    dotted.remove_prefix(dot + 1);
  }
  return std::nullopt;
}

// A string that reads as a dotted identifier path (what getattr/import_module/__import__ take).
bool is_dotted_identifier(std::string_view text) {
  return !text.empty() && text.size() < 256 &&
         text.find_first_of(" \t\n()[]{}:,;'\"") == std::string_view::npos;
}

}  // namespace

std::string_view DispatchInterceptionRule::summary() const {
  return "no dispatch or torch-function modes, mode-stack manipulation or dispatch switches (under any "
         "module "
         "path)";
}

void DispatchInterceptionRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  const Severity severity = severity_for(context.profile);
  FindingSink sink(kId, findings);
  const auto report = [&](std::string_view name, std::string_view what, source::SourceLocation location) {
    sink.add(severity,
             std::string(what) + " `" + std::string(name) + "`" + std::string(kDispatchInterceptionWhy),
             location);
  };
  source::walk(context.module, [&](const source::Node& node) {
    if (const auto* import = source::node_cast<source::Import>(node)) {
      for (const auto& alias : import->names) {
        if (const auto name = interception_component(alias->name)) {
          report(*name, "import of", import->location);
        }
      }
    } else if (const auto* from = source::node_cast<source::ImportFrom>(node)) {
      auto name = interception_component(from->module);
      for (const auto& alias : from->names) {
        if (!name) {
          name = interception_component(alias->name);
        }
      }
      if (name) {
        report(*name, "import of", from->location);
      }
    } else if (const auto* attribute = source::node_cast<source::Attribute>(node)) {
      if (const auto name = interception_component(attribute->attr)) {
        report(*name, "use of", attribute->location);
      }
    } else if (const auto* plain = source::node_cast<source::Name>(node)) {
      if (const auto name = interception_component(plain->id)) {
        report(*name, "use of", plain->location);
      }
    } else if (const auto* def = source::node_cast<source::FunctionDef>(node);
               def != nullptr && def->name == "__torch_dispatch__") {
      report("__torch_dispatch__", "definition of", def->location);
    } else if (const auto text = string_literal(source::expr_cast(&node));
               text && is_dotted_identifier(*text)) {
      if (const auto name = interception_component(*text)) {
        report(*name, "string naming", node.location);
      }
    }
    return source::WalkAction::visit_children;
  });
}

}  // namespace kforge::rules
