#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace kforge::report {

// The profile of a candidate (`kforge profile --json`'s document) as a table of its kernels with their
// roofline position, compiled-kernel facts and diagnosis.
std::string render_profile(const nlohmann::json& profile);

}  // namespace kforge::report
