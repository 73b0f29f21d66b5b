#include "verify/input_attributes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>

namespace kforge::verify {

std::vector<rules::Finding> input_attribute_findings(const std::vector<nlohmann::json>& traces) {
  std::vector<std::string> problems;
  for (const auto& trace : traces) {
    const auto found = trace.find("input_attributes");
    if (found == trace.end() || !found->is_array()) {
      continue;
    }
    for (const auto& problem : *found) {
      const auto text = problem.is_string() ? problem.get<std::string>() : problem.dump();
      if (std::find(problems.begin(), problems.end(), text) == problems.end()) {
        problems.push_back(text);
      }
    }
  }
  if (problems.empty()) {
    return {};
  }
  return {{"input-attributes",
           rules::Severity::reject,
           fmt::format("forward left state on its input tensors ({}): an answer or a call count kept on an "
                       "input tells repeated calls apart from checked ones",
                       fmt::join(problems, "; ")),
           {0, 0}}};
}

}  // namespace kforge::verify
