#include "verify/baseline.hpp"

#include <algorithm>
#include <cmath>

namespace kforge::verify {

nlohmann::json Baseline::to_json() const {
  return {{"kind", kind}, {"samples_ms", samples_ms}, {"median_ms", median_ms}, {"stop_reason", stop_reason}};
}

std::optional<Baseline> Baseline::from_json(const nlohmann::json& document) {
  if (!document.is_object() || !document.contains("samples_ms") || !document["samples_ms"].is_array()) {
    return std::nullopt;
  }
  Baseline baseline;
  baseline.kind = document.value("kind", "eager");
  for (const auto& sample : document["samples_ms"]) {
    if (!sample.is_number() || !std::isfinite(sample.get<double>()) || sample.get<double>() <= 0.0) {
      return std::nullopt;
    }
    baseline.samples_ms.push_back(sample.get<double>());
  }
  baseline.median_ms = document.value("median_ms", 0.0);
  baseline.stop_reason = document.value("stop_reason", "");
  if (baseline.samples_ms.empty() || !(baseline.median_ms > 0.0)) {
    return std::nullopt;
  }
  baseline.from_store = true;
  return baseline;
}

}  // namespace kforge::verify
