#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "problem/problem_catalog.hpp"

namespace kforge::data {

// How the prompts of a suite are worded.
struct PromptStyle {
  std::string data_source;            // "kforge/<suite>": verl routes rewards by it
  std::string instruction;            // template with {problem_name} and {problem_source}
  std::optional<std::string> system;  // a system message before the instruction, if any
};

// The instruction kforge uses unless told otherwise: the reference module, what to write (ModelNew
// with @triton.jit kernels launched from forward), what is not allowed, and one fenced python block.
const std::string& default_instruction();

// The template with its placeholders filled in. Throws std::invalid_argument when the template
// lacks {problem_source}: a prompt without the problem cannot be answered.
std::string render_instruction(const std::string& instruction, const std::string& problem_name,
                               const std::string& problem_source);

// One dataset row, in the shape TRL's GRPOTrainer and verl's RLHFDataset load: `prompt` as chat
// messages, `problem_id` (the id `kforge serve` gives the source), `reference_source`, and verl's
// `data_source`, `ability`, `reward_model` and `extra_info` columns.
nlohmann::json prompt_row(const problem::CatalogEntry& entry, const std::string& problem_source,
                          const PromptStyle& style, std::size_t index);

}  // namespace kforge::data
