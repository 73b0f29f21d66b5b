#pragma once

#include <string>

namespace kforge::cli {

// What `kforge --version` prints: the version, the git commit the binary was built from ("unknown"
// outside a git checkout, "-dirty" when tracked files had changed) and the build type.
std::string version_text();

}  // namespace kforge::cli
