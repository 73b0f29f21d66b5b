#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "source/source_location.hpp"

namespace kforge::rules {

// reject: the candidate fails static analysis; warn: reported, but the candidate goes on.
enum class Severity : std::uint8_t { reject, warn };

std::string_view to_string(Severity severity);

struct Finding {
  std::string rule_id;
  Severity severity = Severity::reject;
  std::string message;
  source::SourceLocation location;

  friend bool operator==(const Finding&, const Finding&) = default;
};

}  // namespace kforge::rules
