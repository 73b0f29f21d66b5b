#include "rules/rule_introspection.hpp"

#include <array>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Modules that exist to inspect or trace the running interpreter: their import is reported.
constexpr auto kIntrospectionModules =
    std::to_array<std::string_view>({"inspect", "gc", "dis", "pdb", "bdb"});

// Reported at each use.
constexpr auto kIntrospectionMembers = std::to_array<std::string_view>(
    {"sys._getframe",         "sys._getframemodulename", "sys._current_frames",    "sys._current_exceptions",
     "sys.settrace",          "sys.setprofile",          "sys.gettrace",           "sys.getprofile",
     "sys.monitoring",        "sys.call_tracing",        "sys.addaudithook",       "traceback.walk_stack",
     "traceback.walk_tb",     "traceback.extract_stack", "traceback.extract_tb",   "traceback.format_stack",
     "traceback.print_stack", "traceback.StackSummary",  "traceback.FrameSummary", "builtins.globals",
     "builtins.breakpoint"});

// The tables hashed once, on first use.
const ForbiddenApi& introspection_api() {
  static const ForbiddenApi api(kIntrospectionModules, kIntrospectionMembers);
  return api;
}

// Attributes of frames, tracebacks, generators, functions and code objects: reported whatever the
// receiver (these names mean nothing else).
constexpr auto kFrameAttributes = std::to_array<std::string_view>(
    {"f_back",       "f_locals",       "f_globals",   "f_builtins",   "f_code",      "f_trace",
     "f_lasti",      "tb_frame",       "tb_next",     "gi_frame",     "gi_code",     "cr_frame",
     "cr_code",      "ag_frame",       "ag_code",     "__code__",     "__globals__", "__closure__",
     "__defaults__", "__kwdefaults__", "co_consts",   "co_code",      "co_names",    "co_varnames",
     "co_freevars",  "co_cellvars",    "co_filename", "cell_contents"});

// Methods that write through the mapping returned by locals()/vars().
constexpr auto kMappingWriters = std::to_array<std::string_view>(
    {"update", "setdefault", "__setitem__", "__delitem__", "pop", "popitem", "clear"});

constexpr std::string_view kIntrospectionWhy =
    ": introspection reaches into other frames, functions and the interpreter's state (for example the "
    "judge's reference outputs or the timing code), which no kernel needs; pass data explicitly and "
    "compute with Triton kernels";

class IntrospectionChecker {
 public:
  IntrospectionChecker(const AnalysisContext& context, std::vector<Finding>& findings, Severity severity)
      : context_(context),
        resolver_(context),
        names_(resolver_.get()),
        sink_(IntrospectionRule::kId, findings),
        severity_(severity) {}

  void run() {
    scan_forbidden_api(
        context_, names_, introspection_api(),
        [this](const ForbiddenImport& import) { report(*import.statement, import_subject(import)); },
        [this](const source::Expr& use, const Resolved& resolved) {
          report(use, describe(use, resolved.origin) + " inspects or traces the interpreter");
        });
    source::walk(context_.module, [this](const source::Node& node) {
      if (const auto* attribute = source::node_cast<source::Attribute>(node)) {
        check_attribute(*attribute);
      } else if (const auto* call = source::node_cast<source::Call>(node)) {
        check_call(*call);
      }
      return source::WalkAction::visit_children;
    });
  }

 private:
  void check_attribute(const source::Attribute& attribute) {
    if (!in_table(kFrameAttributes, attribute.attr)) {
      return;
    }
    // An assignment to an attribute of an imported object is monkeypatching's to report.
    const bool patched = assignment_of_target(attribute, names_) != nullptr &&
                         !names_.resolve_with_import(*attribute.value).import_origin.empty();
    if (!patched) {
      report(attribute, "`" + spelling(attribute) + "` reads frame, function or code internals");
    }
  }

  void check_call(const source::Call& call) {
    const std::string callee = names_.resolve(*call.func);
    const auto literal = call.args.size() >= 2 ? string_literal(call.args[1].get()) : std::nullopt;
    if (callee == "builtins.getattr" && literal && in_table(kFrameAttributes, *literal)) {
      report(call, "`" + spelling(call) + "` reads frame, function or code internals");
      return;
    }
    const bool namespace_mapping =
        call.args.empty() && (callee == "builtins.locals" || callee == "builtins.vars");
    if (!namespace_mapping) {
      return;
    }
    const source::Node* parent = names_.parent(call);
    const auto* subscript = source::node_cast<source::Subscript>(parent);
    const bool item_written = subscript != nullptr && subscript->value.get() == &call &&
                              assignment_of_target(*subscript, names_) != nullptr;
    const auto* method = source::node_cast<source::Attribute>(parent);
    const bool mutated = method != nullptr && in_table(kMappingWriters, method->attr);
    if (item_written || mutated) {
      report(call, "writing through `" + spelling(*call.func) + "()` rebinds local variables by name");
    }
  }

  void report(const source::Node& node, const std::string& what) {
    sink_.add(severity_, what + std::string(kIntrospectionWhy), node.location);
  }

  const AnalysisContext& context_;
  ResolverHandle resolver_;
  const NameResolver& names_;
  FindingSink sink_;
  Severity severity_;
};

}  // namespace

std::string_view IntrospectionRule::summary() const {
  return "no introspection of the interpreter (inspect, gc, frames, code objects, globals(), tracing)";
}

void IntrospectionRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  IntrospectionChecker(context, findings, severity_for(context.profile)).run();
}

}  // namespace kforge::rules
