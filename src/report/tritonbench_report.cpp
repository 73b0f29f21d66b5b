#include "report/tritonbench_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/batch_metrics.hpp"

namespace kforge::report {
namespace {

// kforge's speedup of an accepted verdict, when it was timed.
std::optional<double> accepted_speedup(const nlohmann::json& verdict) {
  if (!verdict.is_object() || verdict.value("outcome", "") != "accepted") {
    return std::nullopt;
  }
  const auto result = sample_result("", verdict);
  return result.speedup;
}

bool accepted(const nlohmann::json& verdict) {
  return verdict.is_object() && verdict.value("outcome", "") == "accepted";
}

std::string share(std::size_t count, std::size_t total) {
  return total == 0
             ? "-"
             : fmt::format("{:.1f}% ({}/{})", 100.0 * static_cast<double>(count) / static_cast<double>(total),
                           count, total);
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string verdict_cell(const TritonBenchRow& row) {
  if (!row.verdict.is_object()) {
    return "no verdict: " + row.verdict_error;
  }
  const auto& failed = row.verdict["failed_stage"];
  return row.verdict.value("outcome", std::string("?")) +
         (failed.is_string() ? " at " + failed.get<std::string>() : std::string());
}

}  // namespace

std::optional<double> profile_efficiency(const nlohmann::json& kernels) {
  double seconds = 0.0;
  double dram = 0.0;
  double compute = 0.0;
  for (const auto& kernel : kernels) {
    const auto roofline = kernel.find("roofline");
    const auto time = kernel.find("total_seconds");
    if (roofline == kernel.end() || !roofline->is_object() || time == kernel.end() || !time->is_number()) {
      continue;
    }
    const auto fraction = [&](const char* key) {
      const auto value = roofline->find(key);
      return value != roofline->end() && value->is_number() ? value->get<double>() : 0.0;
    };
    seconds += time->get<double>();
    dram += fraction("dram_fraction") * time->get<double>();
    compute += fraction("compute_fraction") * time->get<double>();
  }
  if (seconds <= 0.0) {
    return std::nullopt;
  }
  return std::max(dram, compute) / seconds;
}

void hold_to_the_test_block(TritonBenchRow& row) {
  if (!accepted(row.verdict) || (row.call && row.exec)) {
    return;
  }
  const auto why = row.call ? fmt::format("its values differ from the gold's: {}", row.exec_reason)
                            : fmt::format("it fails the item's test block: {}", row.call_error);
  auto& verdict = row.verdict;
  const auto earlier = verdict.value("summary", std::string());
  verdict["outcome"] = "rejected";
  verdict["accepted"] = false;
  verdict["failed_stage"] = "test-block";
  verdict["speedup"] = nullptr;
  verdict["summary"] = fmt::format("rejected at test-block: {} (the captured call alone: {})", why, earlier);
  verdict["stages"].push_back({{"name", "test-block"},
                               {"status", "failed"},
                               {"summary", why},
                               {"findings", nlohmann::json::array()},
                               {"details", nlohmann::json::object()},
                               {"duration_s", 0.0}});
}

TritonBenchMetrics tritonbench_metrics(const std::vector<TritonBenchRow>& rows) {
  TritonBenchMetrics metrics;
  metrics.answers = rows.size();
  double speedup_sum = 0.0;
  double log_sum = 0.0;
  double efficiency_sum = 0.0;
  for (const auto& row : rows) {
    metrics.calls += row.call ? 1U : 0U;
    metrics.execs += row.exec ? 1U : 0U;
    metrics.accepted += accepted(row.verdict) ? 1U : 0U;
    if (!row.exec) {
      continue;
    }
    if (const auto speedup = accepted_speedup(row.verdict); speedup && *speedup > 0) {
      ++metrics.speedups;
      speedup_sum += *speedup;
      log_sum += std::log(*speedup);
    }
    if (row.efficiency && accepted(row.verdict)) {
      ++metrics.efficiencies;
      efficiency_sum += *row.efficiency;
    }
  }
  if (metrics.speedups > 0) {
    const auto count = static_cast<double>(metrics.speedups);
    metrics.speedup_mean = speedup_sum / count;
    metrics.speedup_geomean = std::exp(log_sum / count);
  }
  if (metrics.efficiencies > 0) {
    metrics.efficiency_mean = efficiency_sum / static_cast<double>(metrics.efficiencies);
  }
  return metrics;
}

nlohmann::json tritonbench_row_json(const TritonBenchRow& row) {
  return {{"name", row.name},
          {"origin", row.origin},
          {"call", row.call},
          {"call_error", row.call_error},
          {"exec", row.exec},
          {"exec_reason", row.exec_reason},
          {"entry", row.entry},
          {"writes", row.writes},
          {"writes_inferred", row.writes_inferred},
          {"seconds", row.seconds},
          {"efficiency", optional_number(row.efficiency)},
          {"verdict_error", row.verdict_error},
          {"notes", row.notes},
          {"verdict", row.verdict}};
}

nlohmann::json tritonbench_report_json(const std::vector<TritonBenchRow>& rows, const std::string& channel,
                                       const std::string& device) {
  const auto metrics = tritonbench_metrics(rows);
  const auto rate = [&](std::size_t count) {
    return metrics.answers == 0
               ? nlohmann::json(nullptr)
               : nlohmann::json(static_cast<double>(count) / static_cast<double>(metrics.answers));
  };
  std::vector<SampleResult> samples;
  nlohmann::json items = nlohmann::json::array();
  for (const auto& row : rows) {
    if (row.verdict.is_object()) {
      samples.push_back(sample_result(row.name, row.verdict));
    }
    items.push_back(tritonbench_row_json(row));
  }
  return {{"schema", "kforge.tritonbench/1"},
          {"channel", channel},
          {"device", device},
          {"answers", metrics.answers},
          {"tritonbench",
           {{"call_accuracy", rate(metrics.calls)},
            {"execution_accuracy", rate(metrics.execs)},
            {"speedup", optional_number(metrics.speedup_mean)},
            {"speedup_geomean", optional_number(metrics.speedup_geomean)},
            {"speedup_answers", metrics.speedups},
            {"gpu_efficiency", optional_number(metrics.efficiency_mean)},
            {"efficiency_answers", metrics.efficiencies}}},
          {"kforge",
           {{"accepted_rate", rate(metrics.accepted)}, {"metrics", compute_metrics(samples).to_json()}}},
          {"items", items}};
}

std::string render_tritonbench_report(const std::vector<TritonBenchRow>& rows, const std::string& channel,
                                      const std::string& device) {
  std::string text = fmt::format("TritonBench-{} on {}: {} answers\n", channel, device, rows.size());
  text += fmt::format("  {:<28} {:<5} {:<5} {:<9} {:<10} {}\n", "item", "call", "exec", "speedup",
                      "efficiency", "kforge verdict");
  for (const auto& row : rows) {
    const auto speedup = accepted_speedup(row.verdict);
    text += fmt::format("  {:<28} {:<5} {:<5} {:<9} {:<10} {}\n", row.name, row.call ? "yes" : "no",
                        row.exec ? "yes" : "no", speedup ? fmt::format("{:.2f}x", *speedup) : "-",
                        row.efficiency ? fmt::format("{:.0f}%", 100.0 * *row.efficiency) : "-",
                        verdict_cell(row));
    const auto& why = !row.call ? row.call_error : !row.exec ? row.exec_reason : std::string();
    if (!why.empty()) {
      text += fmt::format("      {}\n", why.substr(0, 300));
    }
    for (const auto& note : row.notes) {
      text += fmt::format("      note: {}\n", note.substr(0, 300));
    }
  }
  const auto metrics = tritonbench_metrics(rows);
  text += fmt::format("call accuracy       {}\n", share(metrics.calls, metrics.answers));
  text += fmt::format("execution accuracy  {}\n", share(metrics.execs, metrics.answers));
  text += fmt::format("kforge accepted     {}\n", share(metrics.accepted, metrics.answers));
  text += metrics.speedup_mean
              ? fmt::format(
                    "speedup             {:.2f}x mean, {:.2f}x geomean over {} execution-accurate, "
                    "accepted answers\n",
                    *metrics.speedup_mean, *metrics.speedup_geomean, metrics.speedups)
              : "speedup             - (no accepted, execution-accurate answer was timed)\n";
  text += metrics.efficiency_mean
              ? fmt::format("GPU efficiency      {:.1f}% of this GPU's measured roofline, mean over {}\n",
                            100.0 * *metrics.efficiency_mean, metrics.efficiencies)
              : "GPU efficiency      - (needs --efficiency on a GPU with ncu)\n";
  return text;
}

}  // namespace kforge::report
