#include "data/sft_collection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "source/code_extraction.hpp"

namespace kforge::data {
namespace {

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return "";
  }
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

// The reply's text before its first fenced block (none when the reply is plain Python).
std::string prose_before_code(const std::string& reply) {
  const auto fence = reply.find("```");
  return fence == std::string::npos ? "" : trim(std::string_view(reply).substr(0, fence));
}

// The code a sample answers with (what the pipeline verifies, and what two samples must share to be
// the same answer): the extracted code, else the whole text.
std::string code_of(const std::string& text) {
  const auto extracted = source::extract_code(text);
  return extracted.ok() ? extracted.code->code : text;
}

std::optional<double> speedup_of(const nlohmann::json& verdict) {
  const auto found = verdict.find("speedup");
  if (found == verdict.end() || !found->is_number() || !(found->get<double>() > 0)) {
    return std::nullopt;
  }
  return found->get<double>();
}

std::string last_user_message(const nlohmann::json& prompt) {
  std::string text;
  for (const auto& message : prompt) {
    if (message.value("role", "") == "user") {
      text = message.value("content", "");
    }
  }
  return text;
}

nlohmann::json verdict_brief(const nlohmann::json& verdict) {
  const auto device = verdict.find("device");
  const auto speedup = speedup_of(verdict);
  return {{"outcome", verdict.value("outcome", "")},
          {"speedup", speedup ? nlohmann::json(*speedup) : nlohmann::json(nullptr)},
          {"device", device != verdict.end() && device->is_object() ? device->value("device", "") : ""},
          {"summary", verdict.value("summary", "")}};
}

// The id of the check that rejected a sample: the first reject finding of its failed stage.
std::string failed_check(const nlohmann::json& verdict) {
  const auto stage_name = verdict.value("failed_stage", nlohmann::json(nullptr));
  const auto stages = verdict.find("stages");
  if (!stage_name.is_string() || stages == verdict.end() || !stages->is_array()) {
    return "";
  }
  for (const auto& stage : *stages) {
    if (stage.value("name", "") != stage_name.get<std::string>() || !stage.contains("findings")) {
      continue;
    }
    for (const auto& finding : stage["findings"]) {
      if (finding.value("severity", "") == "reject") {
        return finding.value("rule", "");
      }
    }
  }
  return "";
}

const nlohmann::json& no_verdict() {
  static const nlohmann::json verdict = {{"outcome", "error"}, {"summary", "no verdict for this sample"}};
  return verdict;
}

// Tallies of one collection, turned into the summary at the end.
struct Tally {
  std::size_t samples = 0;
  std::size_t teacher_errors = 0;
  std::size_t duplicates = 0;
  std::size_t verified = 0;
  std::size_t accepted = 0;
  std::map<std::string, std::size_t> rejected_by_stage;
  std::vector<double> speedups;
  nlohmann::json per_problem = nlohmann::json::array();
};

nlohmann::json speedup_summary(const std::vector<double>& speedups) {
  if (speedups.empty()) {
    return {{"count", 0}, {"geomean", nullptr}, {"min", nullptr}, {"max", nullptr}};
  }
  double log_sum = 0;
  for (double value : speedups) {
    log_sum += std::log(value);
  }
  return {{"count", speedups.size()},
          {"geomean", std::exp(log_sum / static_cast<double>(speedups.size()))},
          {"min", *std::min_element(speedups.begin(), speedups.end())},
          {"max", *std::max_element(speedups.begin(), speedups.end())}};
}

nlohmann::json summary_of(const Tally& tally, const SftSettings& settings, std::size_t problems) {
  std::size_t with_accepted = 0;
  for (const auto& entry : tally.per_problem) {
    with_accepted += entry.value("accepted", 0) > 0 ? 1U : 0U;
  }
  return {
      {"teacher", settings.teacher},
      {"problems", problems},
      {"problems_with_accepted", with_accepted},
      {"samples_per_problem", settings.samples},
      {"samples", tally.samples},
      {"teacher_errors", tally.teacher_errors},
      {"duplicates", tally.duplicates},
      {"verified", tally.verified},
      {"accepted", tally.accepted},
      {"acceptance_rate",
       tally.samples == 0 ? 0.0 : static_cast<double>(tally.accepted) / static_cast<double>(tally.samples)},
      {"rejected_by_stage", tally.rejected_by_stage},
      {"speedup_of_kept", speedup_summary(tally.speedups)},
      {"per_problem", tally.per_problem}};
}

// A problem's samples between the teacher and the verdicts.
struct PendingProblem {
  std::vector<TeacherSample> samples;
  VerifyRequest request;
  std::vector<std::size_t> candidate_sample;  // the sample index of each candidate
  std::vector<std::string> candidate_code;    // the code of each candidate (code_of), extracted once
};

class Collector {
 public:
  explicit Collector(const SftSettings& settings) : settings_(settings) {}

  // A problem's samples sorted: the duplicates and teacher errors logged, the rest to verify.
  PendingProblem sort(const SftProblem& problem, std::vector<TeacherSample> samples) {
    const auto count = static_cast<std::size_t>(std::max(settings_.samples, 0));
    PendingProblem pending;
    pending.request.problem = &problem;
    pending.samples = std::move(samples);
    pending.samples.resize(count, TeacherSample{"", "the teacher gave fewer samples than asked for"});
    std::set<std::string> seen;
    for (std::size_t i = 0; i < pending.samples.size(); ++i) {
      const auto& sample = pending.samples[i];
      ++tally_.samples;
      if (!sample.error.empty()) {
        ++tally_.teacher_errors;
        reject(problem, i, "teacher", sample.error, "", sample.text);
        continue;
      }
      auto code = code_of(sample.text);
      if (!seen.insert(code).second) {
        ++tally_.duplicates;
        reject(problem, i, "duplicate", "the same code as an earlier sample of this problem", "",
               sample.text);
        continue;
      }
      pending.request.candidates.push_back(sample.text);
      pending.candidate_sample.push_back(i);
      pending.candidate_code.push_back(std::move(code));
    }
    return pending;
  }

  // Judges a problem's verified candidates; returns how many were kept.
  std::size_t judge_all(const PendingProblem& pending, std::vector<nlohmann::json> verdicts) {
    const auto& problem = *pending.request.problem;
    const auto& candidates = pending.request.candidates;
    verdicts.resize(candidates.size(), no_verdict());
    std::size_t kept = 0;
    std::optional<double> best;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      ++tally_.verified;
      kept += judge(problem, pending.candidate_sample[c], candidates[c], pending.candidate_code[c],
                    verdicts[c], best)
                  ? 1U
                  : 0U;
    }
    tally_.per_problem.push_back({{"problem", problem.entry.name},
                                  {"problem_id", problem.problem_id},
                                  {"samples", pending.samples.size()},
                                  {"accepted", kept},
                                  {"best_speedup", best ? nlohmann::json(*best) : nlohmann::json(nullptr)}});
    return kept;
  }

  SftCollection finish(std::size_t problems) {
    SftCollection collection{std::move(rows_), std::move(rejected_), summary_of(tally_, settings_, problems)};
    return collection;
  }

 private:
  bool judge(const SftProblem& problem, std::size_t sample, const std::string& text, const std::string& code,
             const nlohmann::json& given, std::optional<double>& best) {
    // A verifier that left a sample without a document (null) gets an error, not an exception.
    const nlohmann::json& verdict = given.is_object() ? given : no_verdict();
    const auto outcome = verdict.value("outcome", "");
    if (outcome != "accepted") {
      const auto stage = outcome == "rejected" ? verdict.value("failed_stage", nlohmann::json("rejected"))
                                               : nlohmann::json("error");
      const auto summary = verdict.value("summary", std::string("no verdict for this sample"));
      reject(problem, sample, stage.is_string() ? stage.get<std::string>() : "rejected", summary,
             failed_check(verdict), text);
      return false;
    }
    const auto answer = sft_answer(text, code);
    const auto speedup = speedup_of(verdict);
    if (speedup) {
      tally_.speedups.push_back(*speedup);
      best = std::max(best.value_or(0.0), *speedup);
    }
    ++tally_.accepted;
    rows_.push_back({{"prompt", problem.prompt},
                     {"completion", nlohmann::json::array({{{"role", "assistant"}, {"content", answer}}})},
                     {"instruction", last_user_message(problem.prompt)},
                     {"answer", answer},
                     {"problem_id", problem.problem_id},
                     {"problem", problem.entry.name},
                     {"teacher", settings_.teacher},
                     {"sample", sample},
                     {"verdict", verdict_brief(verdict)}});
    return true;
  }

  void reject(const SftProblem& problem, std::size_t sample, const std::string& stage,
              const std::string& reason, const std::string& check, const std::string& text) {
    ++tally_.rejected_by_stage[stage];
    rejected_.push_back({{"problem_id", problem.problem_id},
                         {"problem", problem.entry.name},
                         {"teacher", settings_.teacher},
                         {"sample", sample},
                         {"stage", stage},
                         {"check", check},
                         {"reason", reason},
                         {"text", text}});
  }

  const SftSettings& settings_;
  Tally tally_;
  std::vector<nlohmann::json> rows_;
  std::vector<nlohmann::json> rejected_;
};

// The teacher's samples for every problem, `concurrent_problems` calls at a time; a call that throws
// gives its problem samples that say why.
std::vector<std::vector<TeacherSample>> ask_teacher(const std::vector<SftProblem>& problems,
                                                    const Teacher& teacher, const SftSettings& settings) {
  std::vector<std::vector<TeacherSample>> answers(problems.size());
  const auto count = static_cast<std::size_t>(std::max(settings.samples, 0));
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < problems.size(); i = next++) {
      try {
        answers[i] = teacher(problems[i], settings.samples);
      } catch (const std::exception& error) {
        answers[i].assign(count, TeacherSample{"", std::string("the teacher failed: ") + error.what()});
      }
    }
  };
  const auto helpers = std::min(std::max<std::size_t>(settings.concurrent_problems, 1), problems.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < helpers; ++i) {
    threads.emplace_back(work);
  }
  work();
  for (auto& thread : threads) {
    thread.join();
  }
  return answers;
}

}  // namespace

std::string sft_answer(const std::string& reply, const std::string& code) {
  std::string answer = prose_before_code(reply);
  if (!answer.empty()) {
    answer += "\n\n";
  }
  answer += "```python\n" + code;
  if (!code.empty() && code.back() != '\n') {
    answer += '\n';
  }
  answer += "```\n";
  return answer;
}

SftCollection collect_sft(const std::vector<SftProblem>& problems, const Teacher& teacher,
                          const Verifier& verifier, const SftSettings& settings) {
  Collector collector(settings);
  auto answers = ask_teacher(problems, teacher, settings);
  std::vector<PendingProblem> pending;
  pending.reserve(problems.size());
  std::vector<VerifyRequest> requests;
  for (std::size_t i = 0; i < problems.size(); ++i) {
    pending.push_back(collector.sort(problems[i], std::move(answers[i])));
    if (!pending.back().request.candidates.empty()) {
      requests.push_back(pending.back().request);
    }
  }
  std::vector<std::vector<nlohmann::json>> verdicts;
  try {
    verdicts = requests.empty() ? verdicts : verifier(requests);
  } catch (const std::exception& error) {  // every candidate is answered: none is verified
    for (const auto& request : requests) {
      verdicts.emplace_back(request.candidates.size(),
                            nlohmann::json{{"outcome", "error"},
                                           {"summary", std::string("verification failed: ") + error.what()}});
    }
  }
  std::size_t next_request = 0;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    std::vector<nlohmann::json> problem_verdicts;
    if (!pending[i].request.candidates.empty()) {
      if (next_request < verdicts.size()) {
        problem_verdicts = std::move(verdicts[next_request]);
      }
      ++next_request;
    }
    const auto kept = collector.judge_all(pending[i], std::move(problem_verdicts));
    if (settings.progress) {
      settings.progress(i + 1, problems.size(), problems[i], kept);
    }
  }
  return collector.finish(problems.size());
}

std::string teacher_failure(const SftCollection& collection) {
  const auto samples = collection.summary.value("samples", std::size_t{0});
  const auto teacher_errors = collection.summary.value("teacher_errors", std::size_t{0});
  if (samples == 0 || teacher_errors < samples) {
    return "";
  }
  const auto first =
      std::find_if(collection.rejected.begin(), collection.rejected.end(),
                   [](const nlohmann::json& row) { return row.value("stage", "") == "teacher"; });
  return fmt::format(
      "the teacher gave no sample for any of the {} asked for: {}", samples,
      first != collection.rejected.end() ? first->value("reason", "no reason given") : "no reason given");
}

}  // namespace kforge::data
