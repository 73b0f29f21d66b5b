#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "source/python_ast.hpp"
#include "source/python_tokenizer.hpp"
#include "source/source_location.hpp"

namespace kforge::optimize {

// A keyword argument of a launch as source text: what the tuner replaces when the value is computed at
// run time (`num_warps=nw`, `num_warps=4 if n < 2048 else 8`).
struct LaunchKeyword {
  std::string name;
  source::SourceLocation location;  // of the value's first token
  std::string text;                 // the value, from its first token to its last
};

// Where the arguments of a launch `kernel[grid](...)` lie in the source (the parser keeps only where a
// node starts): the tuner adds a launch option the launch does not pass right after its last argument.
struct LaunchArguments {
  bool any = false;                   // at least one argument
  source::SourceLocation after_last;  // just past the last argument (before a trailing comma)
  bool double_star = false;           // a `**options` argument, which may pass any option
  std::vector<LaunchKeyword> keywords;
};

// The arguments of `launch` (a call whose function is a subscript) from the tokens of `source` it was
// parsed from; nullopt when its brackets cannot be followed in the tokens.
std::optional<LaunchArguments> launch_arguments(std::string_view source,
                                                const std::vector<source::Token>& tokens,
                                                const source::Call& launch);

}  // namespace kforge::optimize
