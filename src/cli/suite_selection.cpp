#include "cli/suite_selection.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "source/text_file.hpp"

namespace kforge::cli {

void SuiteSelection::add_options(CLI::App& command) {
  auto* suite_option =
      command
          .add_option("--suite", suite,
                      "suite folder (<name>/problem.py, or KernelBench <id>_<Name>.py files)")
          ->option_text("DIR");
  auto* kernelbench_option = command
                                 .add_option("--kernelbench", kernelbench,
                                             "a KernelBench checkout (with --level) instead of --suite")
                                 ->option_text("DIR");
  suite_option->excludes(kernelbench_option);
  command.add_option("--level", level, "KernelBench level (with --kernelbench): 1, 2, 3 or 4")
      ->check(CLI::Range(1, 4))
      ->option_text("N")
      ->capture_default_str();
  command
      .add_option("--instruction", instruction_file,
                  "file with the instruction template ({problem_source} and {problem_name} filled in)")
      ->check(CLI::ExistingFile)
      ->option_text("FILE");
  command.add_option("--system", system_file, "file with a system message put before each prompt")
      ->check(CLI::ExistingFile)
      ->option_text("FILE");
  command.add_option("--data-source", data_source, "the data_source column (default kforge/<suite>)")
      ->option_text("TEXT");
}

std::string SuiteSelection::missing() const {
  return suite.empty() && kernelbench.empty() ? "give --suite DIR (or --kernelbench PATH --level N)" : "";
}

problem::ProblemCatalog SuiteSelection::catalog() const {
  if (!kernelbench.empty()) {
    return problem::ProblemCatalog::from_kernelbench(kernelbench, level);
  }
  return problem::ProblemCatalog::from_folder(suite);
}

data::PromptStyle SuiteSelection::prompt_style(const problem::ProblemCatalog& catalog) const {
  data::PromptStyle style;
  style.instruction = instruction_file.empty() ? data::default_instruction()
                                               : read_named_text(instruction_file, "--instruction");
  if (!system_file.empty()) {
    style.system = read_named_text(system_file, "--system");
  }
  const auto suite_name = std::filesystem::absolute(catalog.folder()).lexically_normal().filename().string();
  style.data_source = data_source.empty() ? "kforge/" + suite_name : data_source;
  return style;
}

std::string read_named_text(const std::string& file, const char* what) {
  try {
    return source::read_text_file(file);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(fmt::format("{}: {}", what, error.what()));
  }
}

}  // namespace kforge::cli
