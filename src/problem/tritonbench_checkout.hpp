#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::problem {

// A TritonBench checkout (thunlp/TritonBench layout, docs/tritonbench.md): channel G holds GitHub Triton
// files (kernels, a wrapper, a '#' separator line, a test block), channel T PyTorch reference functions
// with the same kind of test block. kforge judges a model's answers against the gold files.
enum class TritonBenchChannel { G, T };

// "G" or "T" (also lower case); throws std::invalid_argument otherwise.
TritonBenchChannel parse_tritonbench_channel(std::string_view text);

// One answer to judge: the item's gold file and the model's code (the gold code itself when no
// predictions were given: a check of the checkout and of kforge, expected to pass every metric).
struct TritonBenchItem {
  std::string name;  // the gold file's stem
  std::filesystem::path gold_file;
  std::optional<std::string> prediction;  // the model's code; nullopt: the gold code
  std::string origin;                     // where the answer came from ("FILE.jsonl:3", "DIR/x.py", "gold")
};

struct TritonBenchSelection {
  std::vector<TritonBenchItem> items;
  std::vector<std::string> unmatched;  // answers that name no item, each with its origin and why
};

// The model's code in an answer, as TritonBench reads it: the text after the last ```python fence (up to
// the closing fence, which TritonBench leaves in), with the chat end tokens <|im_end|> and <|EOT|> removed;
// the whole text when there is no fence.
std::string tritonbench_answer_code(std::string_view answer);

// The items to judge. `predictions` is empty (the gold files judged as their own answers), a JSON Lines
// file of TritonBench's LLM outputs ({"predict", "label"} for G, matched by the gold code; the
// instruction's "Functional Description:" for T, matched against the metadata; or an explicit "file" /
// "name"), or a folder of NAME.py answers (a test block in them is ignored). `only` keeps those names.
// Throws std::invalid_argument saying what is missing (no gold folder, unreadable JSON, unknown names).
TritonBenchSelection load_tritonbench(const std::filesystem::path& checkout, TritonBenchChannel channel,
                                      const std::filesystem::path& predictions,
                                      const std::vector<std::string>& only);

}  // namespace kforge::problem
