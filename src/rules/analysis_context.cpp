#include "rules/analysis_context.hpp"

namespace kforge::rules {

std::string_view to_string(Profile profile) { return profile == Profile::strict ? "strict" : "lenient"; }

std::optional<Profile> profile_from_string(std::string_view name) {
  if (name == "strict") {
    return Profile::strict;
  }
  if (name == "lenient") {
    return Profile::lenient;
  }
  return std::nullopt;
}

}  // namespace kforge::rules
