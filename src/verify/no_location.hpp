#pragma once

#include "source/source_location.hpp"

namespace kforge::verify {

// Where a finding that belongs to no line of the source (runtime evidence, timing) is placed.
inline constexpr source::SourceLocation kNoLocation{0, 0};

}  // namespace kforge::verify
