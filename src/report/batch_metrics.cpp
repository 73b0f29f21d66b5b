#include "report/batch_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kforge::report {
namespace {

std::string threshold_name(double p) {
  return p == std::floor(p) ? fmt::format("fast_{:.0f}", p) : fmt::format("fast_{:g}", p);
}

bool stage_passed(const nlohmann::json& verdict, const std::string& name) {
  for (const auto& stage : verdict.value("stages", nlohmann::json::array())) {
    if (stage.is_object() && stage.value("name", "") == name) {
      return stage.value("status", "") == "passed";
    }
  }
  return false;
}

std::string percent(std::optional<double> value) {
  return value ? fmt::format("{:.1f}%", 100.0 * *value) : "n/a";
}

}  // namespace

const std::vector<double>& fast_p_thresholds() {
  static const std::vector<double> kThresholds{0.0, 0.5, 0.8, 1.0, 1.5, 2.0};
  return kThresholds;
}

double pass_at_k(std::size_t n, std::size_t c, std::size_t k) {
  if (k == 0 || k > n) {
    return 0.0;
  }
  if (n - c < k) {
    return 1.0;
  }
  // 1 - C(n-c, k) / C(n, k) as a product, stable for large n.
  double all_wrong = 1.0;
  for (std::size_t i = n - c + 1; i <= n; ++i) {
    all_wrong *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
  }
  return 1.0 - all_wrong;
}

SampleResult sample_result(const std::string& problem, const nlohmann::json& verdict) {
  SampleResult result;
  result.problem = problem;
  result.outcome = verdict.value("outcome", "error");
  result.compiled = stage_passed(verdict, "compile");
  result.correct = result.outcome == "accepted";
  if (result.correct && verdict.contains("speedup") && verdict["speedup"].is_number()) {
    result.speedup = verdict["speedup"].get<double>();
  }
  return result;
}

BatchMetrics compute_metrics(const std::vector<SampleResult>& results) {
  BatchMetrics metrics;
  metrics.samples = results.size();
  // An error is no judgement on the candidate: it counts neither for nor against it, so every rate
  // is over the judged samples (accepted or rejected) only.
  std::vector<SampleResult> judged;
  std::map<std::string, std::pair<std::size_t, std::size_t>> per_problem;  // (judged n, correct)
  for (const auto& result : results) {
    per_problem.try_emplace(result.problem, 0, 0);
    if (result.outcome == "error") {
      ++metrics.errors;
      continue;
    }
    judged.push_back(result);
    auto& [n, c] = per_problem[result.problem];
    ++n;
    c += result.correct ? 1U : 0U;
  }
  metrics.problems = per_problem.size();
  metrics.judged = judged.size();
  for (const double p : fast_p_thresholds()) {
    metrics.fast_p[threshold_name(p)] = std::nullopt;  // unknown until a sample is judged
  }
  if (judged.empty()) {
    return metrics;
  }
  std::size_t compiled = 0;
  std::size_t correct = 0;
  std::size_t timed = 0;
  double log_sum = 0.0;
  for (const auto& result : judged) {
    compiled += result.compiled ? 1U : 0U;
    correct += result.correct ? 1U : 0U;
    if (result.correct && result.speedup && *result.speedup > 0.0) {
      ++timed;
      log_sum += std::log(*result.speedup);
    }
  }
  const auto total = static_cast<double>(judged.size());
  metrics.compile_rate = static_cast<double>(compiled) / total;
  metrics.correct_rate = static_cast<double>(correct) / total;
  // Speedups exist only where every correct candidate was timed (a GPU run): else fast_p > 0 is unknown.
  const bool all_timed = timed == correct;
  for (const double p : fast_p_thresholds()) {
    if (p == 0.0) {
      metrics.fast_p[threshold_name(p)] = metrics.correct_rate;
    } else if (!all_timed) {
      metrics.fast_p[threshold_name(p)] = std::nullopt;
    } else {
      const auto fast = std::count_if(judged.begin(), judged.end(), [p](const auto& result) {
        return result.correct && result.speedup && *result.speedup > p;
      });
      metrics.fast_p[threshold_name(p)] = static_cast<double>(fast) / total;
    }
  }
  if (timed > 0) {
    metrics.geomean_speedup = std::exp(log_sum / static_cast<double>(timed));
  }
  // pass@k over the problems with judged samples; a problem whose samples all errored says nothing.
  std::size_t smallest = judged.size();
  std::size_t judged_problems = 0;
  for (const auto& [problem, counts] : per_problem) {
    if (counts.first > 0) {
      smallest = std::min(smallest, counts.first);
      ++judged_problems;
    }
  }
  for (const std::size_t k : {std::size_t{1}, std::size_t{5}, std::size_t{10}, smallest}) {
    if (k == 0 || k > smallest || (k == smallest && metrics.pass_at_k.contains(fmt::format("pass@{}", k)))) {
      continue;
    }
    double sum = 0.0;
    for (const auto& [problem, counts] : per_problem) {
      sum += counts.first > 0 ? pass_at_k(counts.first, counts.second, k) : 0.0;
    }
    metrics.pass_at_k[fmt::format("pass@{}", k)] = sum / static_cast<double>(judged_problems);
  }
  return metrics;
}

nlohmann::json BatchMetrics::to_json() const {
  nlohmann::json fast = nlohmann::json::object();
  for (const auto& [name, value] : fast_p) {
    fast[name] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  }
  return {{"samples", samples},
          {"problems", problems},
          {"errors", errors},
          {"judged", judged},
          {"compile_rate", compile_rate},
          {"correct_rate", correct_rate},
          {"fast_p", fast},
          {"geomean_speedup", geomean_speedup ? nlohmann::json(*geomean_speedup) : nlohmann::json(nullptr)},
          {"pass_at_k", pass_at_k}};
}

std::string BatchMetrics::render() const {
  std::string out =
      fmt::format("{} sample(s) over {} problem(s); {} evaluation error(s), left out of the rates below\n",
                  samples, problems, errors);
  const auto rate = [this](double value) { return judged == 0 ? std::nullopt : std::optional(value); };
  out += fmt::format("  compile rate      {}\n  correctness rate  {}\n", percent(rate(compile_rate)),
                     percent(rate(correct_rate)));
  for (const double p : fast_p_thresholds()) {
    const auto name = threshold_name(p);
    const auto found = fast_p.find(name);
    out += fmt::format("  {:<17} {}\n", name, percent(found == fast_p.end() ? std::nullopt : found->second));
  }
  out += fmt::format("  geomean speedup   {}\n",
                     geomean_speedup ? fmt::format("{:.3f}x (correct, timed candidates)", *geomean_speedup)
                                     : "n/a (no timed candidate: timing needs a GPU)");
  for (const auto& [name, value] : pass_at_k) {
    out += fmt::format("  {:<17} {:.1f}%\n", name, 100.0 * value);
  }
  return out;
}

}  // namespace kforge::report
