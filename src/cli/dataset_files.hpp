#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kforge::cli {

// Writes the rows as JSON lines to `path` (a temporary name first, so a failure leaves no half file).
void write_jsonl(const std::vector<nlohmann::json>& rows, const std::filesystem::path& path);

// Writes the rows as Parquet with pyarrow in `python` (empty: the interpreter kforge eval would use):
// the C++ side stays free of Arrow. Throws std::runtime_error saying what is missing.
void write_parquet(const std::vector<nlohmann::json>& rows, const std::filesystem::path& path,
                   const std::string& python);

// Parquet when `format` says so, or when it is "auto" and `path` ends in .parquet; else JSONL.
bool wants_parquet(const std::string& format, const std::filesystem::path& path);

// Writes the rows in the format wanted; returns "Parquet" or "JSONL".
std::string write_rows(const std::vector<nlohmann::json>& rows, const std::filesystem::path& path,
                       const std::string& format, const std::string& python);

}  // namespace kforge::cli
