#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "optimize/chat_sampler.hpp"
#include "optimize/proposal_search.hpp"

namespace kforge::optimize {

// What the LLM is told besides the current best kernel.
struct LlmContext {
  std::string problem_source;  // the PyTorch reference (class Model, get_inputs, ...)
  std::string diagnosis;       // diagnosis_text of the profile, or "" when there is none
};

// Where the search stands when it asks for the next proposals.
struct LlmProgress {
  std::string best_source;
  std::optional<double> start_ms;
  std::optional<double> best_ms;
  const std::vector<SearchAttempt>* attempts = nullptr;  // every attempt so far, oldest first
  std::size_t history = 16;                              // the most recent this many go in the prompt
};

// The profile's findings in a few lines an LLM (or a person) can act on: per kernel its bound, its
// position against the roofline and the diagnosis; then the profile's notes.
std::string diagnosis_text(const nlohmann::json& profile);

// The system and user messages of one round: the rules every reply is verified against, the problem,
// the current best kernel with its time, the diagnosis, the recent attempts with their verdicts, and the
// request for one targeted change as a complete file in one ```python block.
std::vector<ChatMessage> llm_prompt(const LlmContext& context, const LlmProgress& progress);

// What a reply says it changes: its prose before the first code block, on one line, at most `limit`
// characters ("" when the reply starts with code).
std::string reply_idea(const std::string& reply, std::size_t limit = 200);

}  // namespace kforge::optimize
