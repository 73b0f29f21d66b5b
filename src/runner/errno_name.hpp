#pragma once

#include <string>

namespace kforge::runner {

// The errno constant's name ("EPERM"), or "errno N" for a number the C library does not name.
std::string errno_name(int error);

}  // namespace kforge::runner
