#include "cli/dataset_files.hpp"

#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <stdexcept>

#include "runner/command_output.hpp"
#include "runner/python_environment.hpp"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

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

}  // namespace

// Writes the rows as JSON lines to `path` (a temporary name first, so a failure leaves no half file).
void write_jsonl(const std::vector<nlohmann::json>& rows, const fs::path& path) {
  const fs::path partial = path.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    for (const auto& row : rows) {
      out << row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
    if (!out.flush()) {
      throw std::runtime_error(fmt::format("cannot write {}", path.string()));
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
    throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), result.err));
  }
}

bool wants_parquet(const std::string& format, const fs::path& path) {
  return format == "auto" ? path.extension() == ".parquet" : format == "parquet";
}

std::string write_rows(const std::vector<nlohmann::json>& rows, const fs::path& path,
                       const std::string& format, const std::string& python) {
  if (wants_parquet(format, path)) {
    write_parquet(rows, path, python);
    return "Parquet";
  }
  write_jsonl(rows, path);
  return "JSONL";
}

}  // namespace kforge::cli
