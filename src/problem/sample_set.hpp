#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "problem/problem_catalog.hpp"

namespace kforge::problem {

// One candidate of a batch: the problem it answers and its text (a file or inline). A line that could
// not be understood becomes a sample with `error` set, so it still gets a result line.
struct Sample {
  std::size_t index = 0;  // order in the input (line number - 1, or file order)
  std::string problem;    // the catalog name
  std::filesystem::path problem_path;
  std::optional<std::filesystem::path> candidate_path;
  std::optional<std::string> candidate_text;       // a raw LLM completion or code
  nlohmann::json tags = nlohmann::json::object();  // sample_id and any extra fields of the line
  std::optional<std::string> error;                // why this line cannot be evaluated
};

// JSON Lines, one object per line: {"problem": NAME | ID | PATH, one of "completion" (raw LLM text),
// "code" (Python source) or "candidate" (a file path, relative to the JSONL file), "sample_id"
// (optional) and any other fields, kept as tags}. Throws only when the file cannot be read.
std::vector<Sample> load_samples_jsonl(const std::filesystem::path& file, const ProblemCatalog& catalog);

// KernelBench's generation layout: a folder of level_<L>_problem_<P>_sample_<S>_kernel.py files, the
// problem id P found in the catalog (a KernelBench level). Files of another level are skipped.
std::vector<Sample> load_kernelbench_run(const std::filesystem::path& folder, const ProblemCatalog& catalog,
                                         std::optional<int> level);

// A suite's own reference solutions, one sample per problem that has one.
std::vector<Sample> reference_solutions(const ProblemCatalog& catalog);

}  // namespace kforge::problem
