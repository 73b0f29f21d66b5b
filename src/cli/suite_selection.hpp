#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "data/prompt_dataset.hpp"
#include "problem/problem_catalog.hpp"

namespace kforge::cli {

// Which problems a dataset command reads (a suite folder or a KernelBench level) and how their prompts
// are worded; shared by `kforge data prompts` and `kforge data sft`, so both ask the same question.
struct SuiteSelection {
  std::string suite;
  std::string kernelbench;
  int level = 1;
  std::string instruction_file;
  std::string system_file;
  std::string data_source;

  // Adds --suite, --kernelbench, --level, --instruction, --system and --data-source.
  void add_options(CLI::App& command);
  // "" when a suite is chosen, else the line to print.
  std::string missing() const;
  // Throws std::runtime_error saying what was expected when the folder holds no problem.
  problem::ProblemCatalog catalog() const;
  // The instruction and system message (default or from the files) and the data_source of `catalog`.
  data::PromptStyle prompt_style(const problem::ProblemCatalog& catalog) const;
};

// The text of `file`; a failure names `what` the file was for.
std::string read_named_text(const std::string& file, const char* what);

}  // namespace kforge::cli
