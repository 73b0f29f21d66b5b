#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "source/module_index.hpp"
#include "source/python_ast.hpp"

namespace kforge::rules {

class NameResolver;
struct ReadReference;

// How demanding the rules are: strict for final verification, lenient for quick iteration.
// Rules may lower the severity of their findings under lenient.
enum class Profile : std::uint8_t { strict, lenient };

std::string_view to_string(Profile profile);
// "strict" or "lenient"; nullopt for anything else.
std::optional<Profile> profile_from_string(std::string_view name);

// Everything a rule may look at. All members refer to objects owned by the caller.
struct AnalysisContext {
  AnalysisContext(const source::Module& analysed_module, const source::ModuleIndex& module_index,
                  std::string_view candidate_source, Profile rule_profile = Profile::strict,
                  std::string_view problem_text = {}, const NameResolver* shared_names = nullptr)
      : module(analysed_module),
        index(module_index),
        source_text(candidate_source),
        profile(rule_profile),
        problem_source(problem_text),
        names(shared_names) {}

  const source::Module& module;
  const source::ModuleIndex& index;
  std::string_view source_text;
  Profile profile = Profile::strict;
  // Source of the reference problem (KernelBench problem.py); empty when unknown. Rules that
  // depend on the problem (precision-downgrade) treat an empty text as "unknown problem".
  std::string_view problem_source;
  // Name resolution over `module`, built once and shared by the rules of one analysis; null when
  // a rule runs on its own (each rule then builds its own, see rule_support.hpp).
  const NameResolver* names = nullptr;
  // Every read reference of `module` with its resolution (read_references() in rule_support.hpp),
  // computed once for the rules that scan for forbidden APIs; null when a rule runs on its own.
  const std::vector<ReadReference>* references = nullptr;
};

}  // namespace kforge::rules
