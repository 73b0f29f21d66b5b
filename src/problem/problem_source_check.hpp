#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kforge::problem {

// What is wrong with a KernelBench-format problem source before any Python runs: not Python at all (a
// syntax error, with its line and column), or a module that binds no `Model`, `get_inputs` or
// `get_init_inputs` at module level (a class or def, an assignment or an import). nullopt when the
// source has all three. Lets the reward service refuse such a problem with a 400 instead of starting a
// judge that can only fail.
std::optional<std::string> kernelbench_problem_defect(std::string_view source);

}  // namespace kforge::problem
