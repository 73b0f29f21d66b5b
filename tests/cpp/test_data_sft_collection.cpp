#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "data/sft_collection.hpp"

namespace kforge::data {
namespace {

const std::string kCode = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n";

SftProblem problem(const std::string& name) {
  SftProblem result;
  result.entry.name = name;
  result.entry.problem = "/suite/" + name + "/problem.py";
  result.source = "class Model: ...\n";
  result.problem_id = "id-" + name;
  result.prompt = nlohmann::json::array(
      {{{"role", "system"}, {"content", "be brief"}}, {{"role", "user"}, {"content", "write " + name}}});
  return result;
}

std::string markdown(const std::string& prose, const std::string& code) {
  return prose + "\n\n```python\n" + code + "```\n";
}

nlohmann::json accepted(double speedup) {
  return {{"outcome", "accepted"},
          {"speedup", speedup},
          {"summary", "accepted"},
          {"device", {{"device", "cuda:0"}}}};
}

nlohmann::json rejected_at(const std::string& stage, const std::string& rule) {
  return {{"outcome", "rejected"},
          {"failed_stage", stage},
          {"summary", "rejected at " + stage},
          {"speedup", nullptr},
          {"stages",
           {{{"name", "extract"}, {"findings", nlohmann::json::array()}},
            {{"name", stage},
             {"findings",
              {{{"rule", "warn-only"}, {"severity", "warn"}}, {{"rule", rule}, {"severity", "reject"}}}}}}}};
}

TEST(SftAnswer, KeepsTheReasoningAndExactlyTheVerifiedCode) {
  const auto reply =
      "I fuse the two passes.\n\n```python\n" + kCode + "```\n\nMore words after.\n```text\nx\n```\n";
  EXPECT_EQ(sft_answer(reply, kCode), "I fuse the two passes.\n\n```python\n" + kCode + "```\n");
  EXPECT_EQ(sft_answer(kCode, kCode), "```python\n" + kCode + "```\n") << "a plain module has no prose";
  EXPECT_EQ(sft_answer("x", "pass"), "```python\npass\n```\n") << "the code block always ends its line";
}

TEST(CollectSft, KeepsAcceptedSamplesAndLogsEveryOtherWithItsStage) {
  const std::vector<SftProblem> problems{problem("a"), problem("b")};
  const std::string other = kCode + "# other\n";
  const Teacher teacher = [&](const SftProblem& p, int n) {
    EXPECT_EQ(n, 4);
    if (p.entry.name == "a") {
      return std::vector<TeacherSample>{{markdown("Plan A.", kCode), ""},
                                        {markdown("Same code, other words.", kCode), ""},
                                        {"", "HTTP 500 from the endpoint"},
                                        {markdown("Risky.", other), ""}};
    }
    return std::vector<TeacherSample>{{"no code here", ""}, {markdown("B.", kCode), ""}};  // fewer than asked
  };
  std::map<std::string, std::vector<std::string>> verified;
  std::size_t batches = 0;
  const Verifier verifier = [&](const std::vector<VerifyRequest>& requests) {
    ++batches;
    std::vector<std::vector<nlohmann::json>> all;
    for (const auto& request : requests) {
      const auto& p = *request.problem;
      verified[p.entry.name] = request.candidates;
      std::vector<nlohmann::json> verdicts;
      for (const auto& text : request.candidates) {
        if (text == "no code here") {
          verdicts.push_back(rejected_at("extract", "no-code"));
        } else if (text.find("# other") != std::string::npos) {
          verdicts.push_back(rejected_at("static", "threads-and-processes"));
        } else {
          verdicts.push_back(accepted(p.entry.name == "a" ? 2.0 : 8.0));
        }
      }
      all.push_back(std::move(verdicts));
    }
    return all;
  };
  SftSettings settings;
  settings.teacher = "llm";
  settings.samples = 4;
  std::vector<std::string> progress;
  settings.progress = [&](std::size_t done, std::size_t total, const SftProblem& p, std::size_t kept) {
    progress.push_back(std::to_string(done) + "/" + std::to_string(total) + " " + p.entry.name + " " +
                       std::to_string(kept));
  };
  const auto collection = collect_sft(problems, teacher, verifier, settings);

  EXPECT_EQ(batches, 1U) << "every problem's candidates are verified in one batch";
  EXPECT_EQ(verified["a"].size(), 2U) << "the duplicate and the teacher's error are not verified";
  EXPECT_EQ(verified["b"].size(), 2U);
  EXPECT_EQ(progress, (std::vector<std::string>{"1/2 a 1", "2/2 b 1"}));

  ASSERT_EQ(collection.rows.size(), 2U);
  const auto& row = collection.rows[0];
  EXPECT_EQ(row["problem"], "a");
  EXPECT_EQ(row["problem_id"], "id-a");
  EXPECT_EQ(row["teacher"], "llm");
  EXPECT_EQ(row["sample"], 0);
  EXPECT_EQ(row["prompt"], problems[0].prompt) << "the same prompt as kforge data prompts";
  const auto answer = "Plan A.\n\n```python\n" + kCode + "```\n";
  EXPECT_EQ(row["completion"], nlohmann::json::array({{{"role", "assistant"}, {"content", answer}}}));
  EXPECT_EQ(row["instruction"], "write a");
  EXPECT_EQ(row["answer"], answer);
  EXPECT_EQ(row["verdict"]["speedup"], 2.0);
  EXPECT_EQ(row["verdict"]["device"], "cuda:0");

  std::map<std::string, std::vector<std::string>> stages;  // stage -> "problem/sample check"
  for (const auto& rejected : collection.rejected) {
    stages[rejected["stage"]].push_back(rejected["problem"].get<std::string>() + "/" +
                                        std::to_string(rejected["sample"].get<int>()) + " " +
                                        rejected["check"].get<std::string>());
    EXPECT_FALSE(rejected["reason"].get<std::string>().empty());
  }
  EXPECT_EQ(stages["teacher"], (std::vector<std::string>{"a/2 ", "b/2 ", "b/3 "}));
  EXPECT_EQ(stages["duplicate"], (std::vector<std::string>{"a/1 "}));
  EXPECT_EQ(stages["static"], (std::vector<std::string>{"a/3 threads-and-processes"}));
  EXPECT_EQ(stages["extract"], (std::vector<std::string>{"b/0 no-code"}));

  const auto& summary = collection.summary;
  EXPECT_EQ(summary["teacher"], "llm");
  EXPECT_EQ(summary["problems"], 2);
  EXPECT_EQ(summary["problems_with_accepted"], 2);
  EXPECT_EQ(summary["samples"], 8);
  EXPECT_EQ(summary["teacher_errors"], 3);
  EXPECT_EQ(summary["duplicates"], 1);
  EXPECT_EQ(summary["verified"], 4);
  EXPECT_EQ(summary["accepted"], 2);
  EXPECT_DOUBLE_EQ(summary["acceptance_rate"].get<double>(), 0.25);
  EXPECT_EQ(summary["rejected_by_stage"]["teacher"], 3);
  EXPECT_DOUBLE_EQ(summary["speedup_of_kept"]["geomean"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(summary["speedup_of_kept"]["max"].get<double>(), 8.0);
  EXPECT_EQ(summary["per_problem"][1]["best_speedup"], 8.0);
}

TEST(CollectSft, ATeacherThatThrowsCostsOnlyItsProblem) {
  const std::vector<SftProblem> problems{problem("down"), problem("fine")};
  const Teacher teacher = [](const SftProblem& p, int n) {
    if (p.entry.name == "down") {
      throw std::runtime_error("connection refused");
    }
    return std::vector<TeacherSample>(static_cast<std::size_t>(n), {markdown("x", kCode), ""});
  };
  const Verifier verifier = [](const std::vector<VerifyRequest>& requests) {
    std::vector<std::vector<nlohmann::json>> all;
    for (const auto& request : requests) {
      EXPECT_EQ(request.problem->entry.name, "fine") << "a problem without candidates is not sent";
      all.emplace_back(request.candidates.size(), accepted(1.5));
    }
    return all;
  };
  SftSettings settings;
  settings.teacher = "llm";
  settings.samples = 2;
  const auto collection = collect_sft(problems, teacher, verifier, settings);
  ASSERT_EQ(collection.rows.size(), 1U);
  EXPECT_EQ(collection.rows[0]["problem"], "fine");
  EXPECT_EQ(collection.summary["rejected_by_stage"]["teacher"], 2);
  EXPECT_EQ(collection.summary["rejected_by_stage"]["duplicate"], 1);
  for (const auto& rejected : collection.rejected) {
    if (rejected["problem"] == "down") {
      EXPECT_NE(rejected["reason"].get<std::string>().find("connection refused"), std::string::npos);
    }
  }
}

TEST(CollectSft, ATeacherThatGaveNothingAtAllIsAFailureNotAResult) {
  const std::vector<SftProblem> problems{problem("a"), problem("b")};
  const Teacher down = [](const SftProblem&, int n) {
    return std::vector<TeacherSample>(static_cast<std::size_t>(n),
                                      {"", "HTTP request failed: connection refused"});
  };
  const Verifier verifier = [](const std::vector<VerifyRequest>& requests) {
    EXPECT_TRUE(requests.empty()) << "nothing to verify";
    return std::vector<std::vector<nlohmann::json>>(requests.size());
  };
  SftSettings settings;
  settings.teacher = "llm";
  settings.samples = 2;
  const auto failure = teacher_failure(collect_sft(problems, down, verifier, settings));
  EXPECT_NE(failure.find("no sample for any of the 4"), std::string::npos) << failure;
  EXPECT_NE(failure.find("connection refused"), std::string::npos) << failure;

  const Teacher half = [](const SftProblem& p, int n) {
    return std::vector<TeacherSample>(
        static_cast<std::size_t>(n),
        p.entry.name == "a" ? TeacherSample{markdown("x", kCode), ""} : TeacherSample{"", "timed out"});
  };
  const Verifier accept = [](const std::vector<VerifyRequest>& requests) {
    std::vector<std::vector<nlohmann::json>> all;
    for (const auto& request : requests) {
      all.emplace_back(request.candidates.size(), accepted(1.5));
    }
    return all;
  };
  EXPECT_EQ(teacher_failure(collect_sft(problems, half, accept, settings)), "")
      << "a teacher that answered some samples worked";
}

TEST(CollectSft, AVerifierThatFailsLeavesEverySampleAnsweredAndNoneKept) {
  const Teacher teacher = [](const SftProblem& p, int) {
    return std::vector<TeacherSample>{{markdown(p.entry.name, kCode), ""}};
  };
  const Verifier verifier =
      [](const std::vector<VerifyRequest>&) -> std::vector<std::vector<nlohmann::json>> {
    throw std::runtime_error("the judge could not start");
  };
  SftSettings settings;
  settings.teacher = "llm";
  settings.samples = 1;
  const auto collection = collect_sft({problem("a"), problem("b")}, teacher, verifier, settings);
  EXPECT_TRUE(collection.rows.empty());
  ASSERT_EQ(collection.rejected.size(), 2U);
  for (const auto& rejected : collection.rejected) {
    EXPECT_EQ(rejected["stage"], "error");
    EXPECT_NE(rejected["reason"].get<std::string>().find("could not start"), std::string::npos);
  }
  EXPECT_EQ(collection.summary["verified"], 2);
}

TEST(CollectSft, AsksTheTeacherAboutSeveralProblemsAtOnceUpToTheLimit) {
  std::vector<SftProblem> problems;
  for (int i = 0; i < 8; ++i) {
    problems.push_back(problem("p" + std::to_string(i)));
  }
  std::atomic<int> calls_now{0};
  std::atomic<int> most{0};
  const Teacher teacher = [&](const SftProblem& p, int) {
    const int now = ++calls_now;
    for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    --calls_now;
    return std::vector<TeacherSample>{{markdown(p.entry.name, kCode + "# " + p.entry.name + "\n"), ""}};
  };
  const Verifier verifier = [](const std::vector<VerifyRequest>& requests) {
    std::vector<std::vector<nlohmann::json>> all;
    for (const auto& request : requests) {
      all.emplace_back(request.candidates.size(), accepted(1.0));
    }
    return all;
  };
  SftSettings settings;
  settings.teacher = "llm";
  settings.samples = 1;
  settings.concurrent_problems = 3;
  const auto collection = collect_sft(problems, teacher, verifier, settings);
  EXPECT_GE(most.load(), 2) << "problems are asked side by side";
  EXPECT_LE(most.load(), 3) << "never more than concurrent_problems at once";
  ASSERT_EQ(collection.rows.size(), 8U);
  for (std::size_t i = 0; i < problems.size(); ++i) {
    EXPECT_EQ(collection.rows[i]["problem"], problems[i].entry.name) << "rows keep the suite's order";
  }
}

TEST(CollectSft, ASampleLeftWithoutAVerdictDocumentIsAnErrorNotACrash) {
  const Teacher teacher = [](const SftProblem&, int) {
    return std::vector<TeacherSample>{{markdown("x", kCode), ""}, {markdown("y", kCode + "# 2\n"), ""}};
  };
  const Verifier verifier = [](const std::vector<VerifyRequest>&) {
    return std::vector<std::vector<nlohmann::json>>{{nlohmann::json(), accepted(2.0)}};  // a null first
  };
  SftSettings settings;
  settings.teacher = "llm";
  settings.samples = 2;
  const auto collection = collect_sft({problem("a")}, teacher, verifier, settings);
  ASSERT_EQ(collection.rows.size(), 1U);
  ASSERT_EQ(collection.rejected.size(), 1U);
  EXPECT_EQ(collection.rejected[0]["stage"], "error");
  EXPECT_EQ(collection.rejected[0]["sample"], 0);
}

TEST(CollectSft, WithoutTimingsTheSpeedupSummaryIsEmptyNotZero) {
  const Teacher teacher = [](const SftProblem&, int) {
    return std::vector<TeacherSample>{{markdown("x", kCode), ""}};
  };
  const Verifier verifier = [](const std::vector<VerifyRequest>& requests) {
    std::vector<std::vector<nlohmann::json>> all;
    for (const auto& request : requests) {
      all.emplace_back(request.candidates.size(),
                       nlohmann::json{{"outcome", "accepted"}, {"speedup", nullptr}});
    }
    return all;
  };
  SftSettings settings;
  settings.teacher = "llm";
  settings.samples = 1;
  const auto collection = collect_sft({problem("cpu")}, teacher, verifier, settings);
  ASSERT_EQ(collection.rows.size(), 1U);
  EXPECT_TRUE(collection.rows[0]["verdict"]["speedup"].is_null());
  EXPECT_EQ(collection.summary["speedup_of_kept"]["count"], 0);
  EXPECT_TRUE(collection.summary["speedup_of_kept"]["geomean"].is_null());
  EXPECT_DOUBLE_EQ(collection.summary["acceptance_rate"].get<double>(), 1.0);
}

}  // namespace
}  // namespace kforge::data
