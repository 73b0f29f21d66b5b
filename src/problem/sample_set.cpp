#include "problem/sample_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace kforge::problem {
namespace {

namespace fs = std::filesystem;
constexpr std::size_t kMaxLineBytes = std::size_t{16} * 1024 * 1024;

// Fills problem, problem_path and the candidate from one parsed line; sets error when it cannot.
void read_line_object(const nlohmann::json& line, const fs::path& base, const ProblemCatalog& catalog,
                      Sample& sample) {
  if (!line.is_object()) {
    sample.error = "expected a JSON object per line";
    return;
  }
  const auto& problem =
      line.contains("problem") ? line["problem"] : line.value("problem_id", nlohmann::json());
  const std::string reference = problem.is_string()           ? problem.get<std::string>()
                                : problem.is_number_integer() ? std::to_string(problem.get<long>())
                                                              : "";
  for (const auto& [key, value] : line.items()) {
    if (key != "completion" && key != "code" && key != "candidate") {
      sample.tags[key] = value;
    }
  }
  const auto* entry = reference.empty() ? nullptr : catalog.find(reference);
  if (entry == nullptr) {
    sample.problem = reference;
    sample.error = reference.empty() ? "the line names no problem (expected a \"problem\" field)"
                                     : fmt::format("unknown problem '{}' (not in {})", reference,
                                                   catalog.folder().string());
    return;
  }
  sample.problem = entry->name;
  sample.problem_path = entry->problem;
  int given = 0;
  for (const char* key : {"completion", "code"}) {
    if (line.contains(key)) {
      ++given;
      if (!line[key].is_string()) {
        sample.error = fmt::format("\"{}\" must be a string", key);
        return;
      }
      sample.candidate_text = line[key].get<std::string>();
    }
  }
  if (line.contains("candidate")) {
    ++given;
    if (!line["candidate"].is_string()) {
      sample.error = "\"candidate\" must be a file path";
      return;
    }
    const fs::path path = line["candidate"].get<std::string>();
    sample.candidate_path = path.is_absolute() ? path : base / path;
  }
  if (given != 1) {
    sample.error = R"(expected exactly one of "completion", "code" or "candidate")";
  }
}

}  // namespace

std::vector<Sample> load_samples_jsonl(const fs::path& file, const ProblemCatalog& catalog) {
  std::ifstream stream(file, std::ios::binary);
  if (!stream) {
    throw std::runtime_error(fmt::format("cannot read the samples file {}", file.string()));
  }
  std::vector<Sample> samples;
  std::size_t line_number = 0;
  for (std::string text; std::getline(stream, text);) {
    ++line_number;
    if (text.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    Sample sample;
    sample.index = samples.size();
    sample.tags["line"] = line_number;
    if (text.size() > kMaxLineBytes) {
      sample.error = "the line is longer than 16 MiB";
    } else {
      const auto line = nlohmann::json::parse(text, nullptr, false);
      if (line.is_discarded()) {
        sample.error = "the line is not valid JSON";
      } else {
        read_line_object(line, file.parent_path(), catalog, sample);
      }
    }
    if (sample.error) {
      *sample.error = fmt::format("{} line {}: {}", file.filename().string(), line_number, *sample.error);
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

std::vector<Sample> load_kernelbench_run(const fs::path& folder, const ProblemCatalog& catalog,
                                         std::optional<int> level) {
  static const std::regex kName(R"(level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py)");
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& item : fs::directory_iterator(folder, error)) {
    if (item.is_regular_file()) {
      files.push_back(item.path());
    }
  }
  if (error) {
    throw std::runtime_error(
        fmt::format("cannot list the KernelBench run folder {}: {}", folder.string(), error.message()));
  }
  std::sort(files.begin(), files.end());
  std::vector<Sample> samples;
  for (const auto& file : files) {
    std::smatch match;
    const auto name = file.filename().string();
    if (!std::regex_match(name, match, kName) || (level && std::stoi(match[1].str()) != *level)) {
      continue;
    }
    Sample sample;
    sample.index = samples.size();
    sample.candidate_path = file;
    sample.tags = {{"level", std::stoi(match[1].str())},
                   {"problem_id", std::stoi(match[2].str())},
                   {"sample_id", std::stoi(match[3].str())},
                   {"file", name}};
    if (const auto* entry = catalog.find(match[2].str())) {
      sample.problem = entry->name;
      sample.problem_path = entry->problem;
    } else {
      sample.problem = match[2].str();
      sample.error = fmt::format("{}: no problem {} in {}", name, match[2].str(), catalog.folder().string());
    }
    samples.push_back(std::move(sample));
  }
  if (samples.empty()) {
    throw std::runtime_error(fmt::format(
        "no level_<L>_problem_<P>_sample_<S>_kernel.py files in {} (KernelBench's generation layout)",
        folder.string()));
  }
  return samples;
}

std::vector<Sample> reference_solutions(const ProblemCatalog& catalog) {
  std::vector<Sample> samples;
  for (const auto& entry : catalog.entries()) {
    Sample sample;
    sample.index = samples.size();
    sample.problem = entry.name;
    sample.problem_path = entry.problem;
    sample.tags["sample_id"] = "solution";
    if (entry.solution) {
      sample.candidate_path = *entry.solution;
    } else {
      sample.error = fmt::format("{} has no solution.py", entry.name);
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

}  // namespace kforge::problem
