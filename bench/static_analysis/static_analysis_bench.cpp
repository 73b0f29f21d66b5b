// Times the screening kforge does before any Python runs (code extraction, parse, static rules) on
// the files named on the command line: the per-completion CPU cost behind a static rejection's
// latency in `kforge serve` (issue 5's target: p99 under 5 ms at 200 requests/s on 2 cores).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "rules/static_analysis.hpp"
#include "source/code_extraction.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    throw std::runtime_error("cannot read " + path.string());
  }
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

// One screening as the service does it (verify::screen): extract, then analyse what was extracted,
// reusing extraction's parse.
bool screen_once(const std::string& text, const std::string& problem_source) {
  const auto extracted = kforge::source::extract_code(text);
  if (!extracted.ok()) {
    return true;
  }
  const auto& code = *extracted.code;
  const auto profile = kforge::rules::Profile::strict;
  return (code.parsed != nullptr
              ? kforge::rules::analyse_candidate(*code.parsed, code.code, profile, problem_source)
              : kforge::rules::analyse_candidate(code.code, profile, problem_source))
      .rejected();
}

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1));
  return values[index];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times code extraction + static analysis per file (microseconds)"};
  std::vector<std::filesystem::path> files;
  std::filesystem::path problem;
  int repeats = 200;
  app.add_option("files", files, "LLM responses or Python sources to screen")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--problem", problem, "the problem.py the precision rule reads")->check(CLI::ExistingFile);
  app.add_option("--repeats", repeats, "screenings per file")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  const std::string problem_source = problem.empty() ? std::string() : read_file(problem);
  std::vector<double> all;
  fmt::print("{:<48} {:>6} {:>9} {:>9} {:>9}  verdict\n", "file", "lines", "p50 us", "p99 us", "mean us");
  for (const auto& path : files) {
    const std::string text = read_file(path);
    std::vector<double> samples;
    bool rejected = false;
    for (int i = 0; i < repeats; ++i) {
      const auto start = Clock::now();
      rejected = screen_once(text, problem_source);
      samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    double sum = 0;
    for (const double sample : samples) {
      sum += sample;
    }
    all.insert(all.end(), samples.begin(), samples.end());
    fmt::print("{:<48} {:>6} {:>9.1f} {:>9.1f} {:>9.1f}  {}\n", path.filename().string(),
               std::count(text.begin(), text.end(), '\n'), percentile(samples, 0.5),
               percentile(samples, 0.99), sum / static_cast<double>(samples.size()),
               rejected ? "rejected" : "passed");
  }
  fmt::print("all {} screenings: p50 {:.1f} us, p99 {:.1f} us\n", all.size(), percentile(all, 0.5),
             percentile(all, 0.99));
  return 0;
}
