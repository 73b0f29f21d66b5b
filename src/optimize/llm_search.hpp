#pragma once

#include <cstddef>
#include <string>

#include "optimize/chat_sampler.hpp"
#include "optimize/llm_prompt.hpp"
#include "optimize/proposal_search.hpp"

namespace kforge::optimize {

struct LlmSettings {
  SearchLimits limits;
  int samples = 4;           // replies asked for per round, in parallel
  std::size_t history = 16;  // attempts shown in the prompt
};

// The LLM proposer's search: the start is timed, then each round asks the sampler for `samples`
// replies to llm_prompt (the problem, the current best, the diagnosis, the recent attempts and their
// verdicts), takes the code out of each reply, drops code already tried, and runs what is left through
// the evaluator with the full timing; the fastest accepted proposal that beats the best by
// min_improvement becomes the best. A reply without usable code is an attempt with that reason and no
// verdict. Stops on the budget, the deadline, `patience` rounds without improvement, or when a whole
// round of samples failed at the endpoint (the stop reason carries the endpoint's error). Without timing
// (verify-only) every proposal is still verified and the search runs until its patience is spent.
SearchOutcome llm_search(const std::string& source, const LlmContext& context, const LlmSettings& settings,
                         const ChatSampler& sample, const ProposalEvaluator& evaluate);

}  // namespace kforge::optimize
