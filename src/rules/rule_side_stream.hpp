#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// Work on other CUDA streams or graphs, which the timing events on the current stream do not
// see: torch.cuda.Stream/stream()/set_stream, CUDA graphs, wait_stream/wait_event, Event.wait and
// `stream=` arguments. synchronize() is allowed.
class SideStreamRule final : public Rule {
 public:
  static constexpr std::string_view kId = "side-stream";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
