#include "optimize/llm_prompt.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "problem/kforge_hooks.hpp"
#include "source/code_extraction.hpp"

namespace kforge::optimize {
namespace {

constexpr const char* kSystem =
    "You are an expert in writing fast Triton GPU kernels. You improve a Triton implementation of a "
    "PyTorch module that is already correct. Every reply is verified before it counts: static rules "
    "reject code that lets PyTorch or another library do the work the kernels should do, that reads the "
    "reference's results, or that caches outputs between calls; then it must compile, match the "
    "reference on fresh random inputs of several seeds, and is timed against the current best. Reply "
    "with one short paragraph saying what you change and why, then the complete new Python file in one "
    "```python block: it defines class ModelNew with the same constructor arguments and forward "
    "signature as class Model, and the work is done by @triton.jit kernels.";

std::string fenced(const std::string& code) {
  return fmt::format("```python\n{}{}```\n", code, code.empty() || code.back() == '\n' ? "" : "\n");
}

std::string milliseconds(const std::optional<double>& ms) {
  return ms ? fmt::format("{:.4f} ms", *ms) : std::string("not timed");
}

std::string one_line(const std::string& text, std::size_t limit) {
  std::string line;
  for (const char c : text) {
    const bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
    if (space) {
      if (!line.empty() && line.back() != ' ') {
        line += ' ';
      }
    } else {
      line += c;
    }
  }
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  if (line.size() > limit) {
    line = line.substr(0, limit > 3 ? limit - 3 : 0) + "...";
  }
  return line;
}

std::string attempt_line(const SearchAttempt& attempt, const std::optional<double>& start_ms) {
  std::string what = attempt.proposer == "llm"
                         ? (attempt.idea.empty() ? std::string("(no description)") : attempt.idea)
                         : "tuner: block sizes, warps and stages";
  std::string timing;
  if (attempt.result.candidate_ms) {
    timing = start_ms ? fmt::format(" ({:.4f} ms, {:.2f}x the start)", *attempt.result.candidate_ms,
                                    *start_ms / *attempt.result.candidate_ms)
                      : fmt::format(" ({:.4f} ms)", *attempt.result.candidate_ms);
  }
  return fmt::format("- round {} [{}] {} -> {}{}\n", attempt.round, attempt.proposer, what,
                     one_line(attempt.result.summary, 300), timing);
}

}  // namespace

std::string diagnosis_text(const nlohmann::json& profile) {
  if (!profile.is_object()) {
    return "";
  }
  std::string text;
  for (const auto& kernel : profile.value("kernels", nlohmann::json::array())) {
    const auto& roofline = kernel["roofline"];
    text += fmt::format("- kernel {}", kernel.value("name", "?"));
    if (roofline.is_object()) {
      text += fmt::format(": {}", roofline.value("bound", "?"));
      if (roofline["fraction_of_roofline"].is_number()) {
        text +=
            fmt::format(", {:.0f}% of the roofline", 100 * roofline["fraction_of_roofline"].get<double>());
      }
    }
    if (kernel["total_seconds"].is_number() && kernel["launches"].is_number() &&
        kernel["launches"].get<double>() > 0) {
      text += fmt::format(", {:.1f} us per launch",
                          1e6 * kernel["total_seconds"].get<double>() / kernel["launches"].get<double>());
    }
    text += "\n";
    for (const auto& finding : kernel.value("diagnosis", nlohmann::json::array())) {
      if (finding.is_string()) {
        text += fmt::format("  - {}\n", finding.get<std::string>());
      }
    }
  }
  for (const auto& note : profile.value("notes", nlohmann::json::array())) {
    if (note.is_string()) {
      text += fmt::format("- note: {}\n", note.get<std::string>());
    }
  }
  return text;
}

std::vector<ChatMessage> llm_prompt(const LlmContext& context, const LlmProgress& progress) {
  std::string user = fmt::format("## The problem: the PyTorch reference\n{}\n",
                                 fenced(problem::without_kforge_hooks(context.problem_source)));
  user += fmt::format("## The current best Triton implementation ({}; the starting one took {})\n{}\n",
                      milliseconds(progress.best_ms), milliseconds(progress.start_ms),
                      fenced(progress.best_source));
  user += "## Profile of the starting implementation\n";
  user +=
      context.diagnosis.empty() ? "No profile (Nsight Compute did not run).\n\n" : context.diagnosis + "\n";
  if (progress.attempts != nullptr && !progress.attempts->empty()) {
    const auto& attempts = *progress.attempts;
    const std::size_t first = attempts.size() > progress.history ? attempts.size() - progress.history : 0;
    user += fmt::format("## Earlier attempts and their verdicts ({} of {}, oldest first)\n",
                        attempts.size() - first, attempts.size());
    for (std::size_t i = first; i < attempts.size(); ++i) {
      user += attempt_line(attempts[i], progress.start_ms);
    }
    user += "\n";
  }
  user +=
      "## Task\nPropose one targeted change that makes the current best faster on this GPU, guided by "
      "the profile and by what the earlier attempts show (do not repeat a rejected idea). Say in one short "
      "paragraph what you change and why, then give the whole file in one ```python block.\n";
  return {{"system", kSystem}, {"user", user}};
}

std::string reply_idea(const std::string& reply, std::size_t limit) {
  const auto blocks = source::find_code_blocks(reply);
  std::string prose = reply;
  if (blocks.empty()) {
    const auto extracted = source::extract_code(reply);
    if (extracted.ok() && !extracted.code->from_markdown) {
      return "";  // the whole reply is the code
    }
  } else {
    const auto fence = reply.find("```");
    const auto tilde = reply.find("~~~");
    prose = reply.substr(0, std::min(fence, tilde));
  }
  return one_line(prose, limit);
}

}  // namespace kforge::optimize
