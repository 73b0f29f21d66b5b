#include "data/prompt_dataset.hpp"

#include <stdexcept>

#include "problem/kforge_hooks.hpp"
#include "serve/problem_registry.hpp"

namespace kforge::data {
namespace {

constexpr std::string_view kNamePlaceholder = "{problem_name}";
constexpr std::string_view kSourcePlaceholder = "{problem_source}";

void replace_all(std::string& text, std::string_view placeholder, const std::string& value) {
  for (auto at = text.find(placeholder); at != std::string::npos;
       at = text.find(placeholder, at + value.size())) {
    text.replace(at, placeholder.size(), value);
  }
}

}  // namespace

const std::string& default_instruction() {
  static const std::string instruction =
      "You are given a PyTorch reference implementation, `{problem_name}`:\n"
      "\n"
      "```python\n"
      "{problem_source}"
      "```\n"
      "\n"
      "Write a faster implementation of the same computation with Triton GPU kernels.\n"
      "\n"
      "Requirements:\n"
      "- Define `class ModelNew(torch.nn.Module)` with the same `__init__` arguments as `Model` and a "
      "`forward` that returns the same outputs (same shapes, dtypes and values within floating-point "
      "tolerance) for the inputs of `get_inputs()`.\n"
      "- Do the computation in one or more `@triton.jit` kernels launched from `forward`. Do not call "
      "the PyTorch operations you are replacing (torch.matmul, F.softmax, ...), do not fall back to "
      "the reference, and do not cache results between calls.\n"
      "- Import only torch, triton and triton.language (and math). No threads, processes, files, "
      "network, ctypes or other native code.\n"
      "- Do not redefine `Model`, `get_inputs` or `get_init_inputs`.\n"
      "\n"
      "Think about the memory traffic and the parallelism first, then answer with the complete "
      "module in a single ```python code block.\n";
  return instruction;
}

std::string render_instruction(const std::string& instruction, const std::string& problem_name,
                               const std::string& problem_source) {
  if (instruction.find(kSourcePlaceholder) == std::string::npos) {
    throw std::invalid_argument(
        "the instruction template must contain {problem_source} (where the reference module goes); "
        "{problem_name} is optional");
  }
  std::string source = problem_source;
  if (!source.empty() && source.back() != '\n') {
    source += '\n';
  }
  std::string text = instruction;
  replace_all(text, kNamePlaceholder, problem_name);
  replace_all(text, kSourcePlaceholder, source);
  return text;
}

nlohmann::json prompt_row(const problem::CatalogEntry& entry, const std::string& problem_source,
                          const PromptStyle& style, std::size_t index) {
  const auto id = serve::ProblemRegistry::id_of(problem_source);
  auto messages = nlohmann::json::array();
  if (style.system) {
    messages.push_back({{"role", "system"}, {"content", *style.system}});
  }
  messages.push_back({{"role", "user"},
                      {"content", render_instruction(style.instruction, entry.name,
                                                     problem::without_kforge_hooks(problem_source))}});
  return {{"problem_id", id},
          {"problem", entry.name},
          {"data_source", style.data_source},
          {"prompt", messages},
          {"reference_source", problem_source},
          {"ability", "triton-kernel"},
          {"reward_model", {{"style", "rule"}, {"ground_truth", id}}},
          {"extra_info",
           {{"problem_id", id},
            {"problem", entry.name},
            {"reference_source", problem_source},
            {"index", index}}}};
}

}  // namespace kforge::data
