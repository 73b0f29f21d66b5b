#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "problem/problem_catalog.hpp"

namespace kforge::data {

// One problem of an SFT collection: its catalog entry, source, id (the one `kforge serve` gives the
// source) and the chat prompt (the same messages `kforge data prompts` writes, so SFT and GRPO see one
// prompt per problem).
struct SftProblem {
  problem::CatalogEntry entry;
  std::string source;
  std::string problem_id;
  nlohmann::json prompt;  // [{"role": ..., "content": ...}, ...]
};

// One answer of a teacher: the text of a reply (an LLM's, reasoning and code) or why there is none.
struct TeacherSample {
  std::string text;
  std::string error;  // non-empty: the teacher gave nothing for this sample (endpoint down, timeout...)
};

// Gives `n` samples for a problem; always n entries.
using Teacher = std::function<std::vector<TeacherSample>(const SftProblem& problem, int n)>;
// The candidates of one problem (each an LLM reply or a plain module) to verify.
struct VerifyRequest {
  const SftProblem* problem = nullptr;
  std::vector<std::string> candidates;
};
// Verifies every request's candidates with the full verdict pipeline, all in one batch (so problems
// run side by side); per request one verdict document (docs/verdict.md) per candidate, in order.
using Verifier = std::function<std::vector<std::vector<nlohmann::json>>(const std::vector<VerifyRequest>&)>;

struct SftSettings {
  std::string teacher;  // its name in the rows and the summary: "llm" or "inductor"
  int samples = 4;      // per problem
  // Problems whose teacher calls run at once (each call asks for its problem's samples in parallel).
  std::size_t concurrent_problems = 4;
  // Called for each problem once its samples are judged: its number (from 1), the count, the problem and
  // how many of its samples were kept.
  std::function<void(std::size_t done, std::size_t total, const SftProblem&, std::size_t kept)> progress;
};

// What a collection produced: the accepted samples as SFT rows, every other sample with its stage and
// reason, and the summary (acceptance rate, rejections by stage, speedups of what was kept).
struct SftCollection {
  std::vector<nlohmann::json> rows;
  std::vector<nlohmann::json> rejected;
  nlohmann::json summary;
};

// The assistant turn of a kept sample: the reply's prose before its code (the teacher's reasoning) and
// then exactly the verified code in one ```python block, so the model learns the answer that passed.
std::string sft_answer(const std::string& reply, const std::string& code);

// Asks the teacher for `settings.samples` samples per problem (`concurrent_problems` problems at a
// time; the teacher must allow concurrent calls), skips samples whose code repeats an
// earlier one of the same problem, verifies the rest of every problem in one batch, keeps the accepted
// ones. Never throws for a bad sample: every sample ends in `rows` or `rejected`.
SftCollection collect_sft(const std::vector<SftProblem>& problems, const Teacher& teacher,
                          const Verifier& verifier, const SftSettings& settings);

// Why the teacher itself could not work, or "": when it gave no sample at all (every one a teacher error:
// an endpoint that is down, a teacher that needs a GPU), the first reason, so the caller fails instead of
// reporting "0 samples accepted" as a result.
std::string teacher_failure(const SftCollection& collection);

}  // namespace kforge::data
