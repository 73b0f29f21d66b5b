#pragma once

#include <cstddef>
#include <string>

namespace kforge::serve {

// `digits` hex digits from the kernel's random source (getrandom): unguessable job ids and tokens.
// Throws std::runtime_error when the kernel gives none.
std::string random_hex(std::size_t digits);

}  // namespace kforge::serve
