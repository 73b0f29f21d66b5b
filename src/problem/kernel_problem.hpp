#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::problem {

// Kernel mode (docs/kernel-mode.md): a user's Triton file is its own reference. The file's wrapper
// function `entry` defines correctness, so no PyTorch module is needed. kforge generates a problem
// whose Model calls the original wrapper and a candidate whose ModelNew calls a variant's wrapper,
// and the usual pipeline judges the pair.

// A kernel file split at its test block: TritonBench-G style files end with a line of '#' characters
// followed by test code that runs on import; it is kept aside, not run.
struct KernelFileParts {
  std::string code;
  std::string test_block;  // from the separator line on; empty when there is none
};
KernelFileParts split_test_block(std::string_view source);

// Whether the wrapper's return value is one of the outputs compared. kIgnored when the reference's observed
// call returned None: its outputs are the arguments it wrote, and a variant that also returns one of them
// (a common convenience) gives the same answer. kUnlessNone otherwise (--writes named without a capture).
enum class WrapperResult { kUnlessNone, kIgnored };

struct KernelReference {
  std::filesystem::path file;
  std::string entry;                          // the wrapper function the original's callers call
  std::optional<std::filesystem::path> spec;  // inputs spec (JSON); else the file's own get_inputs()
  std::vector<int> writes;                    // arguments the wrapper writes its outputs into
  std::optional<std::string> spec_text;       // an inputs spec already in hand (a capture); before `spec`
  WrapperResult result = WrapperResult::kUnlessNone;
};

// What one call of the wrapper showed: the tensor arguments whose bytes it changed, and whether it
// returned None.
struct ObservedCall {
  std::vector<int> writes;
  bool returns_none = false;
};

// The arguments kernel mode compares like returned outputs when the user named none (--writes): those the
// reference's call `where` wrote (an in-place wrapper, or one that returns some outputs and writes
// others). Throws std::invalid_argument when the call returned None and wrote none of its arguments:
// there is nothing to compare.
std::vector<int> inferred_writes(const ObservedCall& call, const std::string& entry, std::string_view where);

// What becomes of the wrapper's return value, from the reference's observed call.
WrapperResult observed_result(const ObservedCall& call);

// The generated problem's text: the original's code, then Model, get_inputs (from the spec, or the
// file's own) and get_init_inputs. Throws std::invalid_argument saying what is wrong and what to do
// (no such entry, no inputs, a malformed spec, a size name the file already uses) and
// std::runtime_error when a file cannot be read.
std::string kernel_problem_text(const KernelReference& reference);

// The inputs a spec passes by name (`"keyword": "out"`, a keyword-only parameter of the wrapper): input
// index -> parameter name. Empty for a spec without them; throws std::invalid_argument for a keyword
// that is not an identifier.
std::map<int, std::string> spec_keywords(std::string_view spec_text);

// A variant's text as a candidate: its code, then a ModelNew whose forward calls `entry` as the
// problem's Model calls the original (the same `writes`, the same inputs passed by name, the same use of
// the return value).
std::string kernel_candidate_text(std::string_view variant_source, const std::string& entry,
                                  const std::vector<int>& writes,
                                  const std::map<int, std::string>& keywords = {},
                                  WrapperResult result = WrapperResult::kUnlessNone);

// A candidate made by kernel_candidate_text (possibly rewritten since) as a drop-in file: the adapter
// removed and `test_block` put back.
std::string kernel_drop_in_text(std::string_view candidate_text, std::string_view test_block);

}  // namespace kforge::problem
