#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "optimize/llm_prompt.hpp"
#include "optimize/llm_search.hpp"

namespace kforge::optimize {
namespace optimize_llm_search_test {

std::string kernel_with_block(int block) {
  return "import torch\nimport triton\nimport triton.language as tl\n\nBLOCK = " + std::to_string(block) +
         "\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n";
}

std::string reply_with(const std::string& idea, const std::string& code) {
  return idea + "\n\n```python\n" + code + "```\n";
}

// A made-up machine: time halves with each doubling of BLOCK; a source calling torch.nn.functional is
// rejected the way the static rules would.
std::vector<ProposalResult> model_machine(const std::vector<std::string>& sources, Measurement /*unused*/) {
  std::vector<ProposalResult> results;
  results.reserve(sources.size());
  for (const auto& source : sources) {
    std::smatch match;
    if (source.find("torch.nn.functional") != std::string::npos) {
      results.push_back({false, std::nullopt, "rejected at static_analysis: calls torch.nn.functional.gelu"});
    } else if (std::regex_search(source, match, std::regex("BLOCK = (\\d+)"))) {
      results.push_back({true, 1024.0 / std::stod(match[1].str()), "accepted"});
    } else {
      results.push_back({false, std::nullopt, "rejected at compile: no BLOCK"});
    }
  }
  return results;
}

// A scripted endpoint: one list of replies per round, and every prompt it was sent.
struct ScriptedEndpoint {
  std::vector<std::vector<ChatReply>> rounds;
  std::vector<std::vector<ChatMessage>> prompts;
  std::vector<int> asked;

  std::vector<ChatReply> operator()(const std::vector<ChatMessage>& messages, int n) {
    prompts.push_back(messages);
    asked.push_back(n);
    const auto round = prompts.size() - 1;
    auto replies = round < rounds.size() ? rounds[round] : std::vector<ChatReply>{};
    replies.resize(static_cast<std::size_t>(n), ChatReply{"I have no further idea.", ""});
    return replies;
  }
};

LlmContext context() {
  return {"class Model(torch.nn.Module):\n    pass\n", "- kernel k: memory-bound, 40% of the roofline\n"};
}

TEST(LlmSearch, KeepsTheFastestAcceptedReplyAndShowsEveryVerdictInTheNextPrompt) {
  ScriptedEndpoint endpoint;
  endpoint.rounds = {
      {{reply_with("Double the block to cut the launch count.", kernel_with_block(2048)), ""},
       {"Sorry, I cannot help with that.", ""},
       {reply_with("Use the library gelu.", kernel_with_block(8192) + "y = torch.nn.functional.gelu\n"), ""},
       {"", "HTTP 503 Service Unavailable"}},
      {{reply_with("Same again.", kernel_with_block(2048)), ""},
       {reply_with("Quadruple the block.", kernel_with_block(4096)), ""}}};
  LlmSettings settings;
  settings.limits.patience = 1;
  const auto outcome =
      llm_search(kernel_with_block(1024), context(), settings, std::ref(endpoint), model_machine);

  EXPECT_NE(outcome.best_source.find("BLOCK = 4096"), std::string::npos) << outcome.best_source;
  EXPECT_DOUBLE_EQ(*outcome.baseline_ms, 1.0);
  EXPECT_DOUBLE_EQ(*outcome.best_ms, 0.25);
  EXPECT_EQ(outcome.best_ms_after_round, (std::vector<double>{1.0, 0.5, 0.25, 0.25}));
  EXPECT_EQ(outcome.stop_reason, "no improvement in 1 rounds");
  // The start, 2 of 4 replies with code in round 1, 1 new code in round 2, 4 more-of-the-same in round 3.
  EXPECT_EQ(outcome.evaluations, 1 + 2 + 1);
  const auto summary_of = [&](int round, std::size_t index) {
    std::vector<SearchAttempt> in_round;
    std::copy_if(outcome.attempts.begin(), outcome.attempts.end(), std::back_inserter(in_round),
                 [&](const SearchAttempt& attempt) { return attempt.round == round; });
    return in_round.at(index).result.summary;
  };
  EXPECT_EQ(summary_of(1, 0), "accepted");
  EXPECT_NE(summary_of(1, 1).find("no code taken from the reply"), std::string::npos);
  EXPECT_NE(summary_of(1, 2).find("static_analysis"), std::string::npos);
  EXPECT_EQ(summary_of(1, 3), "no reply: HTTP 503 Service Unavailable");
  EXPECT_NE(summary_of(2, 0).find("same code as an earlier attempt"), std::string::npos);

  ASSERT_GE(endpoint.prompts.size(), 2U);
  const auto& second = endpoint.prompts[1].back().content;
  EXPECT_NE(second.find("BLOCK = 2048"), std::string::npos) << "the prompt carries the new best";
  EXPECT_NE(second.find("0.5000 ms"), std::string::npos) << "and its time";
  EXPECT_NE(second.find("Double the block to cut the launch count. -> accepted"), std::string::npos)
      << second;
  EXPECT_NE(second.find("calls torch.nn.functional.gelu"), std::string::npos) << "rejections are shown";
  EXPECT_NE(second.find("40% of the roofline"), std::string::npos) << "the diagnosis is shown";
  EXPECT_NE(second.find("class Model(torch.nn.Module)"), std::string::npos) << "the problem is shown";
  EXPECT_EQ(endpoint.prompts[1].front().role, "system");
}

TEST(LlmSearch, AnEndpointThatNeverAnswersStopsTheSearchWithItsError) {
  ScriptedEndpoint endpoint;
  endpoint.rounds = {{{"", "cannot reach the endpoint: Connection refused"}}};
  LlmSettings settings;
  settings.samples = 1;
  const auto outcome =
      llm_search(kernel_with_block(1024), context(), settings, std::ref(endpoint), model_machine);
  EXPECT_EQ(outcome.stop_reason,
            "the LLM endpoint gave no reply: cannot reach the endpoint: Connection refused");
  EXPECT_EQ(outcome.evaluations, 1) << "only the start";
  EXPECT_EQ(outcome.best_source, kernel_with_block(1024));
}

TEST(LlmSearch, TheBudgetLimitsTheSamplesAskedFor) {
  ScriptedEndpoint endpoint;
  for (int round = 0; round < 5; ++round) {
    std::vector<ChatReply> replies;
    replies.reserve(4);
    for (int k = 0; k < 4; ++k) {
      replies.push_back({reply_with("try", kernel_with_block(16 << (4 * round + k))), ""});
    }
    endpoint.rounds.push_back(replies);
  }
  LlmSettings settings;
  settings.limits.max_evaluations = 7;
  settings.limits.patience = 100;
  const auto outcome =
      llm_search(kernel_with_block(1024), context(), settings, std::ref(endpoint), model_machine);
  EXPECT_EQ(outcome.evaluations, 7);
  EXPECT_EQ(endpoint.asked, (std::vector<int>{4, 2}));
  EXPECT_EQ(outcome.stop_reason, "the budget of 7 evaluations is used");
}

TEST(LlmSearch, StopsOnceTheBestMeetsTheTarget) {
  ScriptedEndpoint endpoint;
  endpoint.rounds = {{{reply_with("Double the block.", kernel_with_block(2048)), ""}},
                     {{reply_with("Double it again.", kernel_with_block(4096)), ""}}};
  LlmSettings settings;
  settings.samples = 1;
  settings.limits.patience = 100;
  settings.limits.target_ms = 0.6;
  const auto outcome =
      llm_search(kernel_with_block(1024), context(), settings, std::ref(endpoint), model_machine);
  EXPECT_EQ(endpoint.prompts.size(), 1U) << "round 1 reached 0.5 ms, so round 2 was never asked for";
  EXPECT_DOUBLE_EQ(*outcome.best_ms, 0.5);
  EXPECT_EQ(outcome.stop_reason, "the best runs in 0.5 ms, at or under the target of 0.6 ms");
}

TEST(LlmSearch, ARejectedStartIsNotSearched) {
  ScriptedEndpoint endpoint;
  const auto outcome =
      llm_search("no block here\n", context(), LlmSettings{}, std::ref(endpoint), model_machine);
  EXPECT_NE(outcome.stop_reason.find("not accepted: rejected at compile"), std::string::npos);
  EXPECT_TRUE(endpoint.prompts.empty()) << "no LLM call for a start that fails";
}

TEST(LlmSearch, WithoutTimingEveryProposalIsStillVerified) {
  ScriptedEndpoint endpoint;
  endpoint.rounds = {{{reply_with("bigger", kernel_with_block(2048)), ""}}};
  LlmSettings settings;
  settings.samples = 1;
  const auto untimed = [](const std::vector<std::string>& sources, Measurement measurement) {
    auto results = model_machine(sources, measurement);
    for (auto& result : results) {
      result.candidate_ms.reset();
    }
    return results;
  };
  const auto outcome = llm_search(kernel_with_block(1024), context(), settings, std::ref(endpoint), untimed);
  EXPECT_EQ(outcome.evaluations, 2) << "the start and round 1's proposal (round 2's reply has no code)";
  EXPECT_EQ(outcome.best_ms_after_round.size(), 3U) << "both patient rounds ran";
  EXPECT_EQ(outcome.best_source, kernel_with_block(1024)) << "nothing is ranked without timing";
  EXPECT_TRUE(outcome.attempts.at(1).result.accepted);
}

TEST(LlmPrompt, ShowsOnlyTheMostRecentAttempts) {
  std::vector<SearchAttempt> attempts;
  attempts.reserve(30);
  for (int i = 0; i < 30; ++i) {
    attempts.push_back(
        {i, "llm", {}, "idea " + std::to_string(i), "", Measurement::final, {true, 1.0, "accepted"}});
  }
  const auto messages = llm_prompt(context(), {kernel_with_block(64), 2.0, 1.0, &attempts, 5});
  const auto& user = messages.back().content;
  EXPECT_NE(user.find("(5 of 30, oldest first)"), std::string::npos) << user;
  EXPECT_NE(user.find("idea 29 -> accepted (1.0000 ms, 2.00x the start)"), std::string::npos) << user;
  EXPECT_EQ(user.find("idea 24 "), std::string::npos);
}

TEST(LlmPrompt, TheDiagnosisNamesEachKernelsBoundAndFindings) {
  const nlohmann::json profile = {
      {"kernels",
       {{{"name", "softmax_kernel"},
         {"launches", 2},
         {"total_seconds", 4e-5},
         {"roofline", {{"bound", "memory-bound"}, {"fraction_of_roofline", 0.41}}},
         {"diagnosis", {"only 0/8 global loads are 128-bit"}}}}},
      {"notes", {"ncu was not found"}}};
  const auto text = diagnosis_text(profile);
  EXPECT_NE(text.find("kernel softmax_kernel: memory-bound, 41% of the roofline, 20.0 us per launch"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  - only 0/8 global loads are 128-bit"), std::string::npos);
  EXPECT_NE(text.find("- note: ncu was not found"), std::string::npos);
  EXPECT_EQ(diagnosis_text(nullptr), "");
}

TEST(LlmPrompt, TheIdeaIsTheProseBeforeTheCode) {
  EXPECT_EQ(reply_idea("Use 8 warps\nfor the reduction.\n\n```python\nx = 1\n```\n"),
            "Use 8 warps for the reduction.");
  EXPECT_EQ(reply_idea("x = 1\n"), "") << "a reply that is only code says nothing";
  EXPECT_EQ(reply_idea(std::string(500, 'a') + "\n```python\nx = 1\n```\n", 20).size(), 20U);
}

TEST(ProposalSearch, ALaterSearchContinuesTheRoundsOfAnEarlierOne) {
  SearchOutcome tune;
  tune.baseline_ms = tune.best_ms = 1.0;
  tune.best_ms_after_round = {1.0, 0.8};
  tune.evaluations = 5;
  tune.attempts = {{0, "tune", {1}, "", "", Measurement::final, {true, 1.0, "accepted"}},
                   {1, "tune", {2}, "", "", Measurement::final, {true, 0.8, "accepted"}}};
  tune.best_ms = 0.8;
  SearchOutcome llm;
  llm.baseline_ms = 0.8;
  llm.best_ms = 0.5;
  llm.best_source = "best";
  llm.best_ms_after_round = {0.8, 0.5};
  llm.evaluations = 3;
  llm.stop_reason = "no improvement in 2 rounds";
  llm.attempts = {{0, "llm", {}, "the start", "", Measurement::final, {true, 0.8, "accepted"}},
                  {1, "llm", {}, "fuse", "best", Measurement::final, {true, 0.5, "accepted"}}};
  append_outcome(tune, llm);
  EXPECT_DOUBLE_EQ(*tune.baseline_ms, 1.0) << "the first start stays the start";
  EXPECT_DOUBLE_EQ(*tune.best_ms, 0.5);
  EXPECT_EQ(tune.best_ms_after_round, (std::vector<double>{1.0, 0.8, 0.5}));
  EXPECT_EQ(tune.evaluations, 8);
  ASSERT_EQ(tune.attempts.size(), 3U) << "the later search's start is the earlier's best";
  EXPECT_EQ(tune.attempts[2].round, 2);
  EXPECT_EQ(tune.best_source, "best");
  EXPECT_EQ(tune.stop_reason, "no improvement in 2 rounds");
}

}  // namespace optimize_llm_search_test
}  // namespace kforge::optimize
