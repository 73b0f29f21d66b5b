#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "source/module_index.hpp"
#include "source/python_ast.hpp"
#include "source/source_location.hpp"

// The config lists of kernels decorated with @triton.autotune, with the source text of the list and of
// each config, so the tuner can pin one config (a rewrite of the list) or tune a single config's values.
namespace kforge::optimize {

struct AutotuneConfigList {
  std::string kernel;
  std::string where;                   // "autotune configs of matmul_kernel at 12:5" or the module constant
  source::SourceLocation location;     // of the list's '['
  std::string text;                    // the list's source text, '[' to ']'
  std::vector<std::string> configs;    // each element's source text
  const source::List* list = nullptr;  // the parsed list; its elements are the configs
};

// The lists given to `configs=` (or first) of each autotuned kernel's decorator, as a list literal or
// a module constant bound once to one. Lists kforge cannot rewrite (built at run time, comprehensions,
// starred elements) are named in `fixed` with the reason.
std::vector<AutotuneConfigList> find_autotune_configs(std::string_view source, const source::Module& module,
                                                      const source::ModuleIndex& index,
                                                      std::vector<std::string>& fixed);

}  // namespace kforge::optimize
