#include "rules/rule_obfuscated_access.hpp"

#include <array>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Modules that exist to load code or reach every name dynamically: their import is reported.
constexpr auto kObfuscatedAccessModules =
    std::to_array<std::string_view>({"importlib", "builtins", "marshal"});

// Reported at each use: code execution from strings, the module table, and decoders of embedded
// payloads (base64 and friends), which honest kernels never need.
constexpr auto kObfuscatedAccessMembers = std::to_array<std::string_view>({"builtins.eval",
                                                                           "builtins.exec",
                                                                           "builtins.compile",
                                                                           "builtins.__import__",
                                                                           "sys.modules",
                                                                           "base64",
                                                                           "codecs.decode",
                                                                           "codecs.getdecoder",
                                                                           "codecs.iterdecode",
                                                                           "codecs.lookup",
                                                                           "zlib.decompress",
                                                                           "zlib.decompressobj",
                                                                           "bz2.decompress",
                                                                           "lzma.decompress",
                                                                           "binascii.a2b_base64",
                                                                           "binascii.unhexlify",
                                                                           "binascii.a2b_hex",
                                                                           "builtins.bytes.fromhex",
                                                                           "builtins.bytearray.fromhex",
                                                                           "operator.attrgetter",
                                                                           "operator.methodcaller"});

// The tables hashed once, on first use.
const ForbiddenApi& obfuscated_access_api() {
  static const ForbiddenApi api(kObfuscatedAccessModules, kObfuscatedAccessMembers);
  return api;
}

// getattr-like builtins whose attribute name decides what is reached.
constexpr auto kAttributeGetters = std::to_array<std::string_view>({"builtins.getattr", "builtins.hasattr"});

constexpr std::string_view kObfuscatedAccessWhy =
    ": it hides from static analysis which code runs, which is how forbidden calls get smuggled in; call "
    "functions by their plain names (getattr with a string literal on your own objects is fine)";

// The Name at the root of a Name/Attribute/Subscript/Call chain, or null.
const source::Name* chain_root(const source::Expr& expr) {
  const source::Expr* current = &expr;
  while (true) {
    if (const auto* attribute = source::node_cast<source::Attribute>(current)) {
      current = attribute->value.get();
    } else if (const auto* subscript = source::node_cast<source::Subscript>(current)) {
      current = subscript->value.get();
    } else if (const auto* call = source::node_cast<source::Call>(current)) {
      current = call->args.empty() ? call->func.get() : call->args.front().get();
    } else {
      return source::node_cast<source::Name>(current);
    }
  }
}

// An object reached through an import (a module, a module's class such as torch.Tensor, or the
// builtins module).
bool is_imported_object(const Resolved& resolved) {
  return is_static_origin(resolved.origin) &&
         (!resolved.import_origin.empty() || in_module(resolved.origin, "builtins"));
}

// A name computed from pieces: concatenation, an f-string, a call (join, decode, chr, format...).
bool is_constructed_string(const source::Expr& expr) {
  if (const auto* literal = source::node_cast<source::StringLiteral>(expr)) {
    return literal->is_fstring;
  }
  return expr.kind() == source::NodeKind::binary_op || expr.kind() == source::NodeKind::call ||
         expr.kind() == source::NodeKind::subscript;
}

class ObfuscationChecker {
 public:
  ObfuscationChecker(const AnalysisContext& context, std::vector<Finding>& findings, Severity severity)
      : context_(context),
        resolver_(context),
        names_(resolver_.get()),
        sink_(ObfuscatedAccessRule::kId, findings),
        severity_(severity) {}

  void run() {
    source::walk(context_.module, [this](const source::Node& node) {
      if (const auto* call = source::node_cast<source::Call>(node)) {
        check_call(*call);
      } else if (const auto* attribute = source::node_cast<source::Attribute>(node)) {
        check_attribute(*attribute);
      }
      if (const auto* name = source::node_cast<source::Name>(node);
          name != nullptr && name->id == "__builtins__" &&
          names_.binding_of(*name).kind != BindingKind::local &&
          assignment_of_target(node, names_) == nullptr) {
        report(*name, "`__builtins__` reaches every builtin by name");
      }
      return source::WalkAction::visit_children;
    });
    scan_forbidden_api(
        context_, names_, obfuscated_access_api(),
        [this](const ForbiddenImport& import) {
          sink_.add(severity_, import_subject(import) + std::string(kObfuscatedAccessWhy),
                    import.statement->location);
        },
        [this](const source::Expr& use, const Resolved& resolved) {
          const source::Name* root = chain_root(use);
          if (root == nullptr || root->id != "__builtins__") {
            report(use, describe(use, resolved.origin) + " loads or decodes code at runtime");
          }
        });
  }

 private:
  void check_call(const source::Call& call) {
    const std::string callee = names_.resolve(*call.func);
    if (in_table(kAttributeGetters, callee) && call.args.size() >= 2 && !string_literal(call.args[1].get())) {
      const source::Expr& object = *call.args[0];
      const Resolved target = names_.resolve_with_import(object);
      const auto* receiver = source::node_cast<source::Name>(object);
      const std::size_t scope = names_.scope_of(object);
      const bool own_object = (receiver != nullptr && receiver->id == names_.scope(scope).self_name &&
                               names_.scope(scope).method_class) ||
                              names_.class_named(object).has_value();
      if (is_imported_object(target)) {
        report(call, "`" + std::string(last_component(callee)) + "` with a computed attribute name on `" +
                         target.origin + "`");
      } else if (!own_object && is_constructed_string(*call.args[1])) {
        report(call, "`" + std::string(last_component(callee)) +
                         "` with an attribute name assembled at runtime on `" + spelling(object) + "`");
      }
    } else if (callee == "builtins.vars" && !call.args.empty()) {
      const Resolved target = names_.resolve_with_import(*call.args[0]);
      if (is_imported_object(target)) {
        report(call,
               "`vars(" + spelling(*call.args[0]) + ")` exposes the namespace of `" + target.origin + "`");
      }
    }
  }

  void check_attribute(const source::Attribute& attribute) {
    if (attribute.attr == "__getattribute__") {
      report(attribute, "`" + spelling(attribute) + "` looks attributes up by computed name");
    } else if (attribute.attr == "__dict__" && assignment_of_target(attribute, names_) == nullptr) {
      const Resolved target = names_.resolve_with_import(*attribute.value);
      if (is_imported_object(target)) {
        report(attribute, "`" + spelling(attribute) + "` exposes the namespace of `" + target.origin + "`");
      }
    }
  }

  void report(const source::Node& node, const std::string& what) {
    sink_.add(severity_, what + std::string(kObfuscatedAccessWhy), node.location);
  }

  const AnalysisContext& context_;
  ResolverHandle resolver_;
  const NameResolver& names_;
  FindingSink sink_;
  Severity severity_;
};

}  // namespace

std::string_view ObfuscatedAccessRule::summary() const {
  return "no dynamic access that hides what runs (computed getattr on modules, __import__, eval/exec, "
         "importlib, sys.modules...)";
}

void ObfuscatedAccessRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  ObfuscationChecker(context, findings, severity_for(context.profile)).run();
}

}  // namespace kforge::rules
