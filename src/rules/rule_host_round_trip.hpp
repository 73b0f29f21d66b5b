#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// Host round trips on forward's path: `.tolist()`, `.numpy()`, `.cpu()`, `.to("cpu")`, `__array__`
// and numpy array constructors move tensor data to the host, where Python or numpy can compute the
// answer that a copy kernel then writes back. `.item()` only warns (reading a scalar parameter is
// honest); the runtime check `host-transfer` rejects any host read of input-derived data.
class HostRoundTripRule final : public Rule {
 public:
  static constexpr std::string_view kId = "host-round-trip";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
