#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "source/python_ast.hpp"
#include "source/source_location.hpp"

namespace kforge::source {

struct ImportedName {
  std::string name;   // "jit", or "*"
  std::string alias;  // empty when there is no `as`
};

// One import statement (anywhere in the module).
struct ImportInfo {
  bool is_from = false;
  std::string module;               // "triton.language"; empty for `from . import x`
  std::string alias;                // `import a.b as c` gives "c" (plain imports only)
  std::vector<ImportedName> names;  // from-imports only
  int level = 0;                    // leading dots of a relative import
  SourceLocation location;
  const Stmt* statement = nullptr;  // the Import or ImportFrom (`import a, b` gives two entries)
};

// A function decorated with triton.jit (directly, via an alias or an import of `jit`), possibly
// under triton.autotune/triton.heuristics; or a module-level `name = triton.jit(fn)`.
struct KernelInfo {
  std::string name;
  std::string qualified_name;           // Python __qualname__, e.g. "Ops.kernel" inside a class
  std::vector<std::string> decorators;  // resolved dotted names, outermost first
  bool autotuned = false;
  bool heuristics = false;
  SourceLocation location;
  const FunctionDef* definition = nullptr;  // null for `name = triton.jit(fn)` when fn is unknown
};

// A module-level function (kernels included) or class; definitions inside module-level
// if/try/with blocks count as module level.
struct FunctionInfo {
  std::string name;
  bool is_kernel = false;
  SourceLocation location;
  const FunctionDef* definition = nullptr;
};

struct ClassInfo {
  std::string name;
  std::vector<std::string> bases;    // base expressions as dotted text, e.g. "nn.Module"
  std::vector<std::string> methods;  // functions defined directly in the class body
  SourceLocation location;
  const ClassDef* definition = nullptr;
};

// The candidate's `ModelNew` class (or the class that `ModelNew = SomeClass` names).
struct ModelInfo {
  std::string class_name;
  std::vector<std::string> bases;
  SourceLocation location;
  const ClassDef* definition = nullptr;
  bool has_init = false;
  std::vector<std::string> init_params;     // without `self`
  bool has_forward = false;                 // defined in the class or a base class of this module
  std::vector<std::string> forward_params;  // without `self`
  SourceLocation forward_location;
  const FunctionDef* forward = nullptr;
};

// A launch site `kernel[grid](...)` (also `kernel.run(...)`).
struct KernelLaunch {
  std::string kernel;
  // Python __qualname__ of the innermost enclosing function, e.g. "ModelNew.forward",
  // "launch", "ModelNew.forward.<locals>.<lambda>"; "<module>" at module level.
  std::string function;
  SourceLocation location;
  bool reachable_from_forward = false;
  // The launched value could not be resolved statically (e.g. a kernel passed as a parameter);
  // the kernel is one referenced from code reachable from forward.
  bool via_indirection = false;
};

// What the static rules need to know about a candidate module. Holds pointers into the Module it
// was built from, which must outlive it.
struct ModuleIndex {
  std::vector<ImportInfo> imports;
  std::vector<FunctionInfo> functions;
  std::vector<ClassInfo> classes;
  std::vector<KernelInfo> kernels;
  std::optional<ModelInfo> model;
  std::vector<KernelLaunch> launches;  // every launch site, sorted by location
  // Qualified names of the functions reachable from ModelNew.forward (forward first). Reachable:
  // module-level functions called or referenced by name (also through local and module aliases),
  // self.method() (including overrides in ModelNew when forward is inherited), methods of helper
  // classes held in self attributes or instantiated, Fn.apply of autograd Functions,
  // torch.ops.ns.name of @torch.library.custom_op/triton_op functions, super() methods, every
  // nested function and lambda inside a reachable function, and every callable handed to Triton
  // anywhere in the module (heuristics values, autotune prune_configs_by/perf_model/hooks,
  // triton.Config(pre_hook=...), kernel.add_pre_run_hook(fn)): Triton calls them during a launch. Resolution
  // is static and deliberately over-approximates (all branches of a conditional alias count).
  std::vector<std::string> reachable_functions;

  const KernelInfo* find_kernel(std::string_view name) const;
  // Distinct kernels launched from code reachable from ModelNew.forward, in order of first launch.
  std::vector<std::string> launched_kernels() const;
  // Kernels with no launch reachable from ModelNew.forward, in definition order.
  std::vector<std::string> unlaunched_kernels() const;
};

// Bound on the name-resolution steps of build_module_index(). Real modules need a few hundred;
// the bound keeps indexing any module to a fraction of a second (about one in the fuzz build).
inline constexpr std::size_t kMaxIndexWork = 2'000'000;

// Thrown by build_module_index() for a module whose names cannot be resolved within
// kMaxIndexWork steps; analyse_candidate() turns it into a rejection.
class IndexTooComplex : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `model_class` names the root class: the candidate's ModelNew, or the problem's Model when a rule
// looks at what the reference itself runs. Throws IndexTooComplex (see above) or std::bad_alloc.
ModuleIndex build_module_index(const Module& module, std::string_view model_class = "ModelNew");

}  // namespace kforge::source
