#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge::verify {

// The reference's timing on one GPU, measured once per problem session (or loaded from the result
// store) and reused by every candidate after a short drift check.
struct Baseline {
  std::string kind = "eager";  // eager | compile
  std::vector<double> samples_ms;
  double median_ms = 0.0;
  std::string stop_reason;
  bool from_store = false;  // loaded from the result store rather than measured in this run

  nlohmann::json to_json() const;
  // nullopt when the document is not a usable baseline (missing fields, no positive samples).
  static std::optional<Baseline> from_json(const nlohmann::json& document);
};

}  // namespace kforge::verify
