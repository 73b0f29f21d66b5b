#include "optimize/llm_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "source/code_extraction.hpp"

namespace kforge::optimize {
namespace {

// A reply's code for the evaluator, or why there is none.
struct Proposal {
  std::string idea;
  std::string code;
  std::string why_not;  // set when there is no code to evaluate
};

Proposal proposal_of(const ChatReply& reply, const std::set<std::string>& tried) {
  if (!reply.error.empty()) {
    return {"", "", fmt::format("no reply: {}", reply.error)};
  }
  const auto idea = reply_idea(reply.text);
  const auto extracted = source::extract_code(reply.text);
  if (!extracted.ok()) {
    return {idea, "", fmt::format("no code taken from the reply: {}", extracted.error)};
  }
  if (tried.contains(extracted.code->code)) {
    return {idea, "", "the same code as an earlier attempt (not evaluated again)"};
  }
  return {idea, extracted.code->code, ""};
}

class ProposalSearch {
 public:
  ProposalSearch(const std::string& source, const LlmContext& context, const LlmSettings& settings,
                 const ChatSampler& sample, const ProposalEvaluator& evaluate)
      : context_(context), settings_(settings), sample_(sample), evaluate_(evaluate) {
    outcome_.best_source = source;
  }

  SearchOutcome run() {
    tried_.insert(outcome_.best_source);
    const auto start = evaluate_({outcome_.best_source}, Measurement::final);
    ++used_;
    const auto start_result = start.empty()
                                  ? ProposalResult{false, std::nullopt, "the evaluator returned no result"}
                                  : start.front();
    record(SearchAttempt{0, "llm", {}, "the start", "", Measurement::final, start_result});
    if (!start_result.accepted) {
      outcome_.stop_reason = fmt::format("the starting candidate is not accepted: {}", start_result.summary);
      outcome_.evaluations = used_;
      return std::move(outcome_);
    }
    outcome_.baseline_ms = outcome_.best_ms = start_result.candidate_ms;
    outcome_.best_ms_after_round.push_back(start_result.candidate_ms.value_or(0.0));
    int idle_rounds = 0;
    for (int round = 1;; ++round) {
      if (auto reason = limit_reached(settings_.limits, used_, 0, outcome_.best_ms)) {
        outcome_.stop_reason = std::move(*reason);  // the start used the budget or met the target
        break;
      }
      const auto improved = run_round(round);
      if (!improved) {
        break;  // the endpoint failed for every sample; the stop reason says why
      }
      outcome_.best_ms_after_round.push_back(outcome_.best_ms.value_or(0.0));
      idle_rounds = *improved ? 0 : idle_rounds + 1;
      if (auto reason = limit_reached(settings_.limits, used_, idle_rounds, outcome_.best_ms)) {
        outcome_.stop_reason = std::move(*reason);
        break;
      }
    }
    outcome_.evaluations = used_;
    return std::move(outcome_);
  }

 private:
  // Asks for the round's samples, evaluates their code; whether the best moved, or nothing when no
  // sample came back from the endpoint.
  std::optional<bool> run_round(int round) {
    const auto messages = llm_prompt(context_, {outcome_.best_source, outcome_.baseline_ms, outcome_.best_ms,
                                                &outcome_.attempts, settings_.history});
    const auto left = std::max(0, settings_.limits.max_evaluations - used_);
    auto replies = sample_(messages, std::min(settings_.samples, left));
    std::vector<Proposal> proposals;
    std::string endpoint_error;
    for (const auto& reply : replies) {
      proposals.push_back(proposal_of(reply, tried_));
      tried_.insert(proposals.back().code);
      if (!reply.error.empty()) {
        endpoint_error = reply.error;
      }
    }
    if (replies.empty() || std::all_of(replies.begin(), replies.end(),
                                       [](const ChatReply& reply) { return !reply.error.empty(); })) {
      record_unevaluated(round, proposals);
      outcome_.stop_reason = fmt::format("the LLM endpoint gave no reply: {}",
                                         endpoint_error.empty() ? "no samples came back" : endpoint_error);
      return std::nullopt;
    }
    std::vector<std::string> sources;
    for (const auto& proposal : proposals) {
      if (proposal.why_not.empty()) {
        sources.push_back(proposal.code);
      }
    }
    auto results = sources.empty() ? std::vector<ProposalResult>{} : evaluate_(sources, Measurement::final);
    results.resize(sources.size(), ProposalResult{false, std::nullopt, "the evaluator returned no result"});
    used_ += static_cast<int>(sources.size());
    bool improved = false;
    const auto best_before = outcome_.best_ms;
    auto next_result = results.begin();  // the results follow the evaluated proposals in order
    for (const auto& proposal : proposals) {
      if (!proposal.why_not.empty()) {
        record_unevaluated(round, {proposal});
        continue;
      }
      const auto& result = *next_result++;
      record(SearchAttempt{round, "llm", {}, proposal.idea, proposal.code, Measurement::final, result});
      if (result.accepted && result.candidate_ms && best_before &&
          *result.candidate_ms < *best_before * (1.0 - settings_.limits.min_improvement) &&
          (!improved || *result.candidate_ms < *outcome_.best_ms)) {
        outcome_.best_ms = result.candidate_ms;
        outcome_.best_source = proposal.code;
        improved = true;
      }
    }
    return improved;
  }

  void record(SearchAttempt attempt) {
    outcome_.attempts.push_back(std::move(attempt));
    if (settings_.limits.on_attempt) {
      settings_.limits.on_attempt(outcome_.attempts.back());
    }
  }

  void record_unevaluated(int round, const std::vector<Proposal>& proposals) {
    for (const auto& proposal : proposals) {
      record(SearchAttempt{round,
                           "llm",
                           {},
                           proposal.idea,
                           proposal.code,
                           Measurement::final,
                           {false, std::nullopt, proposal.why_not}});
    }
  }

  const LlmContext& context_;
  const LlmSettings& settings_;
  const ChatSampler& sample_;
  const ProposalEvaluator& evaluate_;
  SearchOutcome outcome_;
  std::set<std::string> tried_;
  int used_ = 0;
};

}  // namespace

SearchOutcome llm_search(const std::string& source, const LlmContext& context, const LlmSettings& settings,
                         const ChatSampler& sample, const ProposalEvaluator& evaluate) {
  return ProposalSearch(source, context, settings, sample, evaluate).run();
}

}  // namespace kforge::optimize
