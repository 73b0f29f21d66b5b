#include "cli/data_command.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "data/prompt_dataset.hpp"
#include "runner/command_output.hpp"
#include "runner/python_environment.hpp"
#include "source/text_file.hpp"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

struct PromptsOptions {
  std::string suite;
  std::string kernelbench;
  int level = 1;
  std::string out = "prompts.jsonl";
  std::string format = "auto";
  std::string instruction_file;
  std::string system_file;
  std::string data_source;
  std::string python;
};

// Parquet is written by pyarrow in the project's Python: the C++ side stays free of Arrow.
constexpr const char* kParquetScript =
    "import json, sys\n"
    "try:\n"
    "    import pyarrow as pa, pyarrow.parquet as pq\n"
    "except ImportError:\n"
    "    sys.exit('writing Parquet needs pyarrow in ' + sys.executable + ': pip install pyarrow, '\n"
    "             'or write JSONL (--out FILE.jsonl)')\n"
    "with open(sys.argv[1], encoding='utf-8') as lines:\n"
    "    rows = [json.loads(line) for line in lines if line.strip()]\n"
    "pq.write_table(pa.Table.from_pylist(rows), sys.argv[2])\n";

std::string read_text(const std::string& file, const char* what) {
  try {
    return source::read_text_file(file);
  } catch (const std::runtime_error& error) {
    throw std::runtime_error(fmt::format("{}: {}", what, error.what()));
  }
}

bool wants_parquet(const PromptsOptions& options) {
  if (options.format == "auto") {
    return fs::path(options.out).extension() == ".parquet";
  }
  return options.format == "parquet";
}

problem::ProblemCatalog catalog_of(const PromptsOptions& options) {
  if (!options.kernelbench.empty()) {
    return problem::ProblemCatalog::from_kernelbench(options.kernelbench, options.level);
  }
  return problem::ProblemCatalog::from_folder(options.suite);
}

// Writes the rows as JSON lines to `path` (a temporary name first, so a failure leaves no half file).
void write_jsonl(const std::vector<nlohmann::json>& rows, const fs::path& path) {
  const fs::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    for (const auto& row : rows) {
      out << row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
    if (!out.flush()) {
      throw std::runtime_error(fmt::format("--out {}: cannot write the file", path.string()));
    }
  }
  fs::rename(partial, path);
}

void write_parquet(const std::vector<nlohmann::json>& rows, const fs::path& path, const std::string& python) {
  const fs::path staging = path.string() + ".jsonl.partial";
  write_jsonl(rows, staging);
  const auto environment =
      runner::find_python_environment(python.empty() ? std::nullopt : std::optional<fs::path>(python));
  const auto result = runner::run_command(
      {environment.interpreter.string(), "-I", "-c", kParquetScript, staging.string(), path.string()});
  fs::remove(staging);
  if (result.exit_code != 0) {
    throw std::runtime_error(fmt::format("--out {}: {}", path.string(), result.err));
  }
}

int run_prompts(const PromptsOptions& options) {
  try {
    const auto catalog = catalog_of(options);
    data::PromptStyle style;
    style.instruction = options.instruction_file.empty()
                            ? data::default_instruction()
                            : read_text(options.instruction_file, "--instruction");
    if (!options.system_file.empty()) {
      style.system = read_text(options.system_file, "--system");
    }
    const auto suite_name = fs::absolute(catalog.folder()).lexically_normal().filename().string();
    style.data_source = options.data_source.empty() ? "kforge/" + suite_name : options.data_source;
    std::vector<nlohmann::json> rows;
    for (const auto& entry : catalog.entries()) {
      rows.push_back(
          data::prompt_row(entry, read_text(entry.problem.string(), "problem"), style, rows.size()));
    }
    const bool parquet = wants_parquet(options);
    if (parquet) {
      write_parquet(rows, options.out, options.python);
    } else {
      write_jsonl(rows, options.out);
    }
    std::cout << fmt::format("kforge data prompts: {} prompts from {} ({}) written to {} ({})\n", rows.size(),
                             catalog.folder().string(), style.data_source, options.out,
                             parquet ? "Parquet" : "JSONL");
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "kforge data prompts: " << error.what() << "\n";
    return 2;
  }
}

}  // namespace

std::function<int()> add_data_command(CLI::App& app) {
  auto options = std::make_shared<PromptsOptions>();
  auto* data = app.add_subcommand("data", "write training datasets from problem suites");
  data->require_subcommand(1);
  auto* prompts = data->add_subcommand(
      "prompts", "the RL prompt dataset of a suite (JSONL or Parquet, for TRL and verl)");
  auto* suite = prompts->add_option("--suite", options->suite,
                                    "suite folder (<name>/problem.py, or KernelBench <id>_<Name>.py files)");
  auto* kernelbench = prompts->add_option("--kernelbench", options->kernelbench,
                                          "a KernelBench checkout (with --level) instead of --suite");
  suite->excludes(kernelbench);
  prompts->add_option("--level", options->level, "KernelBench level (with --kernelbench)")
      ->check(CLI::Range(1, 4))
      ->capture_default_str();
  prompts->add_option("--out,-o", options->out, "output file (.jsonl, or .parquet for Parquet)")
      ->capture_default_str();
  prompts->add_option("--format", options->format, "auto (by --out's extension), jsonl or parquet")
      ->check(CLI::IsMember({"auto", "jsonl", "parquet"}))
      ->capture_default_str();
  prompts
      ->add_option("--instruction", options->instruction_file,
                   "file with the instruction template ({problem_source} and {problem_name} filled in)")
      ->check(CLI::ExistingFile);
  prompts->add_option("--system", options->system_file, "file with a system message put before each prompt")
      ->check(CLI::ExistingFile);
  prompts->add_option("--data-source", options->data_source,
                      "the data_source column (default kforge/<suite>)");
  prompts->add_option("--python", options->python,
                      "Python with pyarrow, for Parquet (default: as kforge eval)");
  return [options, prompts, suite, kernelbench]() {
    if (!prompts->parsed()) {
      return -1;
    }
    if (suite->count() == 0 && kernelbench->count() == 0) {
      std::cerr << "kforge data prompts: give --suite DIR (or --kernelbench PATH --level N)\n";
      return 2;
    }
    return run_prompts(*options);
  };
}

}  // namespace kforge::cli
