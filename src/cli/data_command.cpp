#include "cli/data_command.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/common_options.hpp"
#include "cli/data_sft_command.hpp"
#include "cli/dataset_files.hpp"
#include "cli/suite_selection.hpp"
#include "data/prompt_dataset.hpp"

namespace kforge::cli {
namespace {

struct PromptsOptions {
  SuiteSelection selection;
  std::string out = "prompts.jsonl";
  std::string format = "auto";
  std::string python;
};

int run_prompts(const PromptsOptions& options) {
  try {
    const auto catalog = options.selection.catalog();
    const auto style = options.selection.prompt_style(catalog);
    std::vector<nlohmann::json> rows;
    for (const auto& entry : catalog.entries()) {
      rows.push_back(
          data::prompt_row(entry, read_named_text(entry.problem.string(), "problem"), style, rows.size()));
    }
    const auto format = write_rows(rows, options.out, options.format, options.python);
    std::cout << fmt::format("kforge data prompts: {} prompt{} from {} ({}) written to {} ({})\n",
                             rows.size(), rows.size() == 1 ? "" : "s", catalog.folder().string(),
                             style.data_source, options.out, format);
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "kforge data prompts: " << error.what() << "\n";
    return 2;
  }
}

std::function<int()> add_prompts_subcommand(CLI::App& data) {
  auto options = std::make_shared<PromptsOptions>();
  auto* prompts =
      data.add_subcommand("prompts", "the RL prompt dataset of a suite (JSONL or Parquet, for TRL and verl)");
  options->selection.add_options(*prompts);
  add_output_option(*prompts, options->out, "the prompt dataset (.jsonl, or .parquet for Parquet)")
      ->capture_default_str();
  add_deprecated_option(*prompts, "--out", "--output", options->out);
  prompts
      ->add_option("--format", options->format,
                   "auto (by --output's extension), jsonl or parquet (Parquet needs pyarrow in --python)")
      ->check(CLI::IsMember({"auto", "jsonl", "parquet"}))
      ->option_text("auto|jsonl|parquet")
      ->capture_default_str();
  add_python_option(*prompts, options->python);
  return [options, prompts]() {
    if (!prompts->parsed()) {
      return -1;
    }
    if (const auto missing = options->selection.missing(); !missing.empty()) {
      std::cerr << "kforge data prompts: " << missing << "\n";
      return 2;
    }
    return run_prompts(*options);
  };
}

}  // namespace

std::function<int()> add_data_command(CLI::App& app) {
  auto* data = app.add_subcommand("data", "write training datasets from problem suites");
  data->require_subcommand(1);
  auto prompts = add_prompts_subcommand(*data);
  auto sft = add_sft_subcommand(*data);
  return [prompts, sft]() {
    const int code = prompts();
    return code != -1 ? code : sft();
  };
}

}  // namespace kforge::cli
