#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/analysis_context.hpp"
#include "rules/finding.hpp"
#include "rules/module_table.hpp"
#include "rules/name_resolution.hpp"
#include "source/python_ast.hpp"
#include "source/source_location.hpp"

// Plumbing shared by the rules: which code runs on the path from ModelNew.forward, which nodes are
// references and which are assignment targets, and the import statements of forbidden modules.
namespace kforge::rules {

// The name resolver a rule uses: the one the context shares, or one built for this rule when the
// context has none (a rule run on its own).
class ResolverHandle {
 public:
  explicit ResolverHandle(const AnalysisContext& context);
  const NameResolver& get() const { return shared_ != nullptr ? *shared_ : *own_; }

 private:
  const NameResolver* shared_;
  std::optional<NameResolver> own_;
};

// A function or lambda whose body a rule inspects.
struct FunctionBody {
  const source::Node* node = nullptr;  // FunctionDef or Lambda
  std::size_t scope = 0;               // the scope it opens
  std::string qualified_name;
};

// The functions of ModuleIndex::reachable_functions (forward's call graph, nested functions and
// lambdas included), in that order. Several nodes may share a qualified name (e.g. two lambdas
// in one function, or a def redefined under an `if`): all of them are returned.
std::vector<FunctionBody> reachable_bodies(const AnalysisContext& context, const NameResolver& names);

// The @triton.jit kernels of the module (ModuleIndex::kernels with a known definition).
std::vector<FunctionBody> kernel_bodies(const AnalysisContext& context, const NameResolver& names);

// Calls `visit` on every node evaluated when `function` (a FunctionDef or Lambda) runs: its body,
// and for functions, lambdas and classes defined inside it their decorators, defaults,
// annotations and bases, but not the bodies of nested functions and lambdas (they run when
// called, and are listed in reachable_bodies() on their own when forward can reach them).
void walk_body(const source::Node& function, const std::function<void(const source::Node&)>& visit);

// Calls `visit` on every node of every reachable body.
void walk_reachable(const AnalysisContext& context, const NameResolver& names,
                    const std::function<void(const source::Node&, const FunctionBody&)>& visit);

// True for a Name, Attribute or `getattr(obj, "literal")` call that is the whole of a reference:
// not the object of an enclosing attribute access (`torch` in `torch.softmax`) nor the object
// of an enclosing getattr-with-literal.
bool is_reference_root(const source::Node& node, const NameResolver& names);

// The statement whose target `node` lies in (`x.a` in `x.a = 1`, `x` in `x[i] += 1`, `t` in
// `del t`, `for t in ...`), or null when `node` is read, not written.
const source::Node* assignment_of_target(const source::Node& node, const NameResolver& names);

// Source spelling of an expression for messages: `F.softmax`, `x.sum(...)`, `getattr(torch, "mm")`.
std::string spelling(const source::Expr& expr);
// "`F.softmax` (torch.nn.functional.softmax)", or just "`torch.softmax`" when both agree.
std::string describe(const source::Expr& expr, std::string_view origin);

// Whether `table` holds `value` exactly.
bool in_table(std::span<const std::string_view> table, std::string_view value);

// The entry of `modules` that `origin` lies in (see in_module), if any.
std::optional<std::string_view> module_match(std::string_view origin,
                                             std::span<const std::string_view> modules);

// One import statement that brings in modules of a list: the statement and the matched entries.
struct ForbiddenImport {
  const source::Stmt* statement = nullptr;
  std::vector<std::string> modules;  // distinct matched entries of the list, in statement order
};

// Import statements anywhere in the module that import a module in `modules` (or something
// inside one): `import a.b`, `import a.b as c`, `from a import b`, `from a.b import c` and
// `from a import b` where a.b is listed. Relative imports never match.
// Names in `exceptions` (and inside them) are not reported: `from torch._C import <allowed member>`.
std::vector<ForbiddenImport> forbidden_imports(const source::ModuleIndex& index, const ModuleTable& modules,
                                               const ModuleTable* exceptions = nullptr);

// "`a`", "`a` and `b`", "`a`, `b` and `c`".
std::string quoted_list(const std::vector<std::string>& items);

// Appends one rule's findings, at most one per source location: nested nodes often start at the
// same place (`torch.cuda.Stream().wait_stream` and `torch.cuda.Stream`), and one report there
// is enough.
class FindingSink {
 public:
  FindingSink(std::string_view rule_id, std::vector<Finding>& findings)
      : rule_id_(rule_id), findings_(findings) {}

  void add(Severity severity, std::string message, source::SourceLocation location);

 private:
  std::string_view rule_id_;
  std::vector<Finding>& findings_;
  std::set<std::pair<int, int>> locations_;
};

// An API a rule forbids: whole modules, whose import statements are reported (and uses through
// those imports are not reported again), and members reported at each use. A rule builds its
// ForbiddenApi once (a function-local static): the tables are hashed on construction.
struct ForbiddenApi {
  ForbiddenApi(std::span<const std::string_view> module_names, std::span<const std::string_view> member_names,
               std::span<const std::string_view> exception_names = {})
      : modules(module_names), members(member_names), exceptions(exception_names) {}

  ModuleTable modules;
  ModuleTable members;
  // Members of `members`/`modules` that stay allowed (e.g. torch.jit.is_scripting).
  ModuleTable exceptions;
};

// A reference that is read (not an assignment target) and is the whole of its expression (see
// is_reference_root), with what it resolves to.
struct ReadReference {
  const source::Expr* expr = nullptr;
  Resolved resolved;
};

// Every read reference of `module` in tree order: what scan_forbidden_api looks at, resolved once
// for all the rules of an analysis (AnalysisContext::references).
std::vector<ReadReference> read_references(const source::Module& module, const NameResolver& names);

// Calls `report_import` for each import statement of a forbidden module and `report_use` for each
// read reference anywhere in the module (assignment targets excluded: monkeypatching owns them)
// whose origin lies in a forbidden member, or in a forbidden module reached through another
// import (`torch.multiprocessing` after `import torch`).
void scan_forbidden_api(const AnalysisContext& context, const NameResolver& names, const ForbiddenApi& api,
                        const std::function<void(const ForbiddenImport&)>& report_import,
                        const std::function<void(const source::Expr&, const Resolved&)>& report_use);

// "import of `a`" / "import of `a` and `b`" for an import finding.
std::string import_subject(const ForbiddenImport& import);

}  // namespace kforge::rules
