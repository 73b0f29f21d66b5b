#include "problem/problem_source_check.hpp"

#include <fmt/format.h>

#include <array>
#include <set>
#include <vector>

#include "source/module_index.hpp"
#include "source/python_parser.hpp"

namespace kforge::problem {
namespace {

constexpr std::array kRequiredNames{"Model", "get_inputs", "get_init_inputs"};

// Names bound by plain assignments at module level (`Model = SomeClass`), in the module body only.
void add_assigned_names(const source::Module& module, std::set<std::string>& names) {
  for (const auto& statement : module.body) {
    std::vector<const source::Expr*> targets;
    if (const auto* assign = source::node_cast<source::Assign>(statement.get())) {
      for (const auto& target : assign->targets) {
        targets.push_back(target.get());
      }
    } else if (const auto* annotated = source::node_cast<source::AnnAssign>(statement.get())) {
      targets.push_back(annotated->target.get());
    }
    for (const auto* target : targets) {
      if (const auto* name = source::node_cast<source::Name>(target)) {
        names.insert(name->id);
      }
    }
  }
}

}  // namespace

std::optional<std::string> kernelbench_problem_defect(std::string_view source) {
  const auto parsed = source::parse_module(source);
  if (!parsed.ok()) {
    return fmt::format("it is not Python source: syntax error at {}: {}",
                       source::to_string(parsed.error->location), parsed.error->message);
  }
  const auto index = source::build_module_index(*parsed.module);
  std::set<std::string> bound;
  for (const auto& klass : index.classes) {
    bound.insert(klass.name);
  }
  for (const auto& function : index.functions) {
    bound.insert(function.name);
  }
  for (const auto& import : index.imports) {
    if (!import.alias.empty()) {
      bound.insert(import.alias);
    }
    for (const auto& name : import.names) {
      if (name.name == "*") {
        return std::nullopt;  // `from m import *` may bind anything: the judge finds out
      }
      bound.insert(name.alias.empty() ? name.name : name.alias);
    }
  }
  add_assigned_names(*parsed.module, bound);
  std::vector<std::string> missing;
  for (const char* name : kRequiredNames) {
    if (!bound.contains(name)) {
      missing.emplace_back(name);
    }
  }
  if (missing.empty()) {
    return std::nullopt;
  }
  return fmt::format(
      "it defines no {} at module level; a KernelBench problem has class Model(nn.Module), get_inputs() "
      "and get_init_inputs()",
      fmt::join(missing, ", "));
}

}  // namespace kforge::problem
