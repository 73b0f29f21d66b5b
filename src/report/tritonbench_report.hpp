#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge::report {

// One judged TritonBench answer: TritonBench's own checks, then kforge's verdict (docs/tritonbench.md).
struct TritonBenchRow {
  std::string name;
  std::string origin;            // where the answer came from
  bool call = false;             // answer + gold test block ran to the end
  std::string call_error;        // why not
  bool exec = false;             // ... and its test values and stdout are the gold's
  std::string exec_reason;       // why not
  std::string entry;             // the wrapper kforge judged (found from the test block)
  std::vector<int> writes;       // arguments the wrapper writes its outputs into, compared like outputs
  bool writes_inferred = false;  // found by comparing the arguments before and after the gold's call
  std::map<std::string, double> seconds;  // wall time of each phase: gold, call, compare, verdict
  nlohmann::json verdict;                 // kforge's verdict document, or null when none could be made
  std::string verdict_error;              // why there is no verdict
  std::optional<double> efficiency;       // fraction of this GPU's measured roofline (profile with ncu)
  std::vector<std::string> notes;         // what the reader should know about how it was judged
};

// TritonBench's metrics as its paper defines them, over all answers: call and execution accuracy;
// speedup and GPU efficiency over the answers that are execution-accurate (here also kforge-accepted,
// so a speedup is never of a wrong or dishonest kernel), with kforge's own KernelBench metrics beside.
struct TritonBenchMetrics {
  std::size_t answers = 0;
  std::size_t calls = 0;
  std::size_t execs = 0;
  std::size_t accepted = 0;  // kforge's verdict: correct on fresh inputs, honest
  std::size_t speedups = 0;  // answers the speedup mean is over
  std::optional<double> speedup_mean;
  std::optional<double> speedup_geomean;
  std::size_t efficiencies = 0;
  std::optional<double> efficiency_mean;
};

// TritonBench's GPU efficiency of one answer from its profile's kernels (docs/profile.md): the larger of
// the time-weighted DRAM fraction and compute fraction of this GPU's measured ceilings; nullopt when no
// kernel has a roofline position.
std::optional<double> profile_efficiency(const nlohmann::json& kernels);

TritonBenchMetrics tritonbench_metrics(const std::vector<TritonBenchRow>& rows);

// An answer whose run of the item's own test block failed (call) or gave other values than the gold's
// (exec) is wrong on the item's own tests, whatever the verdict found on the one call it captured: an
// accepted verdict becomes a rejection at stage "test-block" that says both. Other rows are unchanged.
void hold_to_the_test_block(TritonBenchRow& row);

// One row as the report lists it (and as --results writes it, one JSON line per answer).
nlohmann::json tritonbench_row_json(const TritonBenchRow& row);

// The report (schema kforge.tritonbench/1): the metrics, kforge's batch metrics and every row.
nlohmann::json tritonbench_report_json(const std::vector<TritonBenchRow>& rows, const std::string& channel,
                                       const std::string& device);

// A table of the rows and the metrics for the terminal.
std::string render_tritonbench_report(const std::vector<TritonBenchRow>& rows, const std::string& channel,
                                      const std::string& device);

}  // namespace kforge::report
