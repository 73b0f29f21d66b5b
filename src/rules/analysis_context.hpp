#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "source/module_index.hpp"
#include "source/python_ast.hpp"

namespace kforge::rules {

// How demanding the rules are: strict for final verification, lenient for quick iteration.
// Rules may lower the severity of their findings under lenient.
enum class Profile : std::uint8_t { strict, lenient };

std::string_view to_string(Profile profile);
// "strict" or "lenient"; nullopt for anything else.
std::optional<Profile> profile_from_string(std::string_view name);

// Everything a rule may look at. All members refer to objects owned by the caller.
struct AnalysisContext {
  const source::Module& module;
  const source::ModuleIndex& index;
  std::string_view source_text;
  Profile profile = Profile::strict;
};

}  // namespace kforge::rules
