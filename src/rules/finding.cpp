#include "rules/finding.hpp"

namespace kforge::rules {

std::string_view to_string(Severity severity) { return severity == Severity::reject ? "reject" : "warn"; }

}  // namespace kforge::rules
