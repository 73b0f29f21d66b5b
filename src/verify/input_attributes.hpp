#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "rules/finding.hpp"

namespace kforge::verify {

// `input-attributes`: the candidate left state on its input tensors during a traced call (a Python
// attribute, a .grad, a swapped class; the worker lists them in each trace's "input_attributes"). An
// answer or a call count kept on an input object is how a candidate tells repeated (timed) calls from
// checked ones, so any such state rejects (docs/threat-model.md).
std::vector<rules::Finding> input_attribute_findings(const std::vector<nlohmann::json>& traces);

}  // namespace kforge::verify
