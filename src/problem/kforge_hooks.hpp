#pragma once

#include <string>
#include <string_view>

namespace kforge::problem {

// A problem file may carry module-level settings for kforge itself, named KFORGE_* (KFORGE_SMALL: the
// sizes --small applies). They are test hooks, not part of the task.

// True when the problem assigns KFORGE_SMALL at module level (so --small can apply it).
bool defines_small_sizes(std::string_view problem_source);

// The source without its module-level KFORGE_* assignments and the comment lines right above them: what
// a model is shown as the task (a prompt must not hint at the sizes kforge tests with).
std::string without_kforge_hooks(std::string_view problem_source);

}  // namespace kforge::problem
