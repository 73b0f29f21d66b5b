#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge::report {

// What the metrics need from one result line.
struct SampleResult {
  std::string problem;
  std::string outcome;    // accepted | rejected | error
  bool compiled = false;  // passed extract, static and compile
  bool correct = false;   // accepted (correct, honest, and not caught cheating while timed)
  std::optional<double> speedup;
};

// KernelBench's metrics over a batch, and pass@k when problems have several samples.
struct BatchMetrics {
  std::size_t samples = 0;
  std::size_t problems = 0;
  std::size_t errors = 0;  // evaluations that failed for a reason not the candidate's
  std::size_t judged = 0;  // samples with a verdict on the candidate (accepted or rejected): the rates' base
  double compile_rate = 0.0;
  double correct_rate = 0.0;
  std::map<std::string, std::optional<double>> fast_p;  // "fast_1.5" -> share; nullopt without timings
  std::optional<double> geomean_speedup;                // over correct candidates with a speedup
  std::map<std::string, double> pass_at_k;              // "pass@1" -> mean over problems

  nlohmann::json to_json() const;
  std::string render() const;
};

// The thresholds of fast_p: 0, 0.5, 0.8, 1, 1.5 and 2.
const std::vector<double>& fast_p_thresholds();

// Unbiased pass@k (Chen et al. 2021) of one problem with n samples, c of them correct.
double pass_at_k(std::size_t n, std::size_t c, std::size_t k);

// fast_p counts a sample when it is correct and its speedup is above p (fast_0 = correct share);
// rates and pass@k are over the judged samples: an error (not the candidate's fault) is left out, never
// counted as a rejection.
BatchMetrics compute_metrics(const std::vector<SampleResult>& results);

// The SampleResult of one verdict document (docs/verdict.md).
SampleResult sample_result(const std::string& problem, const nlohmann::json& verdict);

}  // namespace kforge::report
