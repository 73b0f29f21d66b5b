#include "optimize/optimize_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace kforge::optimize {
namespace {

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json knobs_json(const KnobSearch& search, const SearchOutcome& outcome) {
  nlohmann::json knobs = nlohmann::json::array();
  for (std::size_t i = 0; i < search.knobs.size(); ++i) {
    const auto& knob = search.knobs[i];
    knobs.push_back({{"name", knob.name},
                     {"kind", knob_kind_name(knob.kind)},
                     {"where", knob.where},
                     {"kernels", knob.kernels},
                     {"start", knob.value},
                     {"best", i < outcome.best_values.size() ? outcome.best_values[i] : knob.value},
                     {"choices", knob.choices}});
  }
  return knobs;
}

nlohmann::json attempts_json(const KnobSearch& search, const SearchOutcome& outcome) {
  nlohmann::json attempts = nlohmann::json::array();
  const auto files = attempt_file_names(outcome);
  for (std::size_t a = 0; a < outcome.attempts.size(); ++a) {
    const auto& attempt = outcome.attempts[a];
    nlohmann::json values = nlohmann::json::object();
    for (std::size_t i = 0; i < attempt.values.size() && i < search.knobs.size(); ++i) {
      values[fmt::format("{} ({})", search.knobs[i].name, search.knobs[i].where)] = attempt.values[i];
    }
    attempts.push_back({{"round", attempt.round},
                        {"proposer", attempt.proposer},
                        {"values", values},
                        {"idea", attempt.idea},
                        {"file", files[a].empty() ? nlohmann::json(nullptr) : nlohmann::json(files[a])},
                        {"measurement", attempt.measurement == Measurement::final ? "final" : "screening"},
                        {"accepted", attempt.result.accepted},
                        {"ms", optional_number(attempt.result.candidate_ms)},
                        {"summary", attempt.result.summary}});
  }
  return attempts;
}

nlohmann::json roofline_fraction(const nlohmann::json& profile) {
  return profile.is_object() ? profile.value("fraction_of_roofline", nlohmann::json(nullptr)) : nullptr;
}

std::string escape_html(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    switch (c) {
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '&':
        escaped += "&amp;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

std::string percent(const nlohmann::json& fraction) {
  return fraction.is_number() ? fmt::format("{:.0f}%", 100 * fraction.get<double>()) : "not measured";
}

// The speedup over the start after each round, as an inline SVG polyline.
std::string speedup_chart(const nlohmann::json& speedups) {
  if (!speedups.is_array() || speedups.size() < 2) {
    return "<p>No rounds ran.</p>";
  }
  constexpr double kWidth = 640;
  constexpr double kHeight = 220;
  constexpr double kMargin = 36;
  double top = 1.0;
  for (const auto& value : speedups) {
    top = std::max(top, value.get<double>());
  }
  top *= 1.1;
  std::string points;
  const double step = (kWidth - 2 * kMargin) / static_cast<double>(speedups.size() - 1);
  for (std::size_t i = 0; i < speedups.size(); ++i) {
    const double x = kMargin + step * static_cast<double>(i);
    const double y = kHeight - kMargin - (kHeight - 2 * kMargin) * speedups[i].get<double>() / top;
    points += fmt::format("{:.1f},{:.1f} ", x, y);
  }
  const double one = kHeight - kMargin - (kHeight - 2 * kMargin) / top;
  return fmt::format(
      R"(<svg width="{0}" height="{1}" role="img" aria-label="speedup per round">)"
      R"(<line x1="{2}" y1="{3:.1f}" x2="{4}" y2="{3:.1f}" stroke="#bbb" stroke-dasharray="4"/>)"
      R"(<text x="4" y="{3:.1f}" font-size="11">1.0x</text>)"
      R"(<polyline fill="none" stroke="#1f6feb" stroke-width="2" points="{5}"/>)"
      R"(<text x="{2}" y="{6}" font-size="11">start</text><text x="{7}" y="{6}" font-size="11">round {8}</text></svg>)",
      kWidth, kHeight, kMargin, one, kWidth - kMargin, points, kHeight - 8, kWidth - kMargin - 40,
      speedups.size() - 1);
}

std::string profile_rows(const nlohmann::json& profile, const char* label) {
  std::string rows;
  if (!profile.is_object()) {
    return fmt::format("<tr><td>{}</td><td colspan=\"4\">not profiled</td></tr>", label);
  }
  for (const auto& kernel : profile.value("kernels", nlohmann::json::array())) {
    const auto& roofline = kernel["roofline"];
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", label,
        escape_html(kernel.value("name", "")),
        roofline.is_object() ? escape_html(roofline.value("bound", "")) : "-",
        roofline.is_object() ? percent(roofline["fraction_of_roofline"]) : "-",
        escape_html(kernel["diagnosis"].empty() ? "" : kernel["diagnosis"][0].get<std::string>()));
  }
  return rows;
}

}  // namespace

std::vector<std::string> attempt_file_names(const SearchOutcome& outcome) {
  std::vector<std::string> files;
  files.reserve(outcome.attempts.size());
  std::map<int, int> per_round;
  for (const auto& attempt : outcome.attempts) {
    const int index = ++per_round[attempt.round];
    files.push_back(attempt.source.empty() ? ""
                                           : fmt::format("attempts/round-{}-{}.py", attempt.round, index));
  }
  return files;
}

std::string render_attempt_line(const SearchAttempt& attempt, const std::vector<Knob>& knobs) {
  std::string change;
  for (std::size_t i = 0; i < attempt.values.size() && i < knobs.size(); ++i) {
    if (attempt.values[i] != knobs[i].value) {
      change += fmt::format("{}{}={}", change.empty() ? "" : " ", knobs[i].name, attempt.values[i]);
    }
  }
  if (attempt.proposer == "tune" && change.empty()) {
    change = attempt.values.empty() ? attempt.idea : "the start";
  } else if (attempt.proposer != "tune") {
    change = attempt.idea.empty() ? "(no idea given)" : attempt.idea;
  }
  constexpr std::size_t kMaxChange = 60;
  if (change.size() > kMaxChange) {
    change = change.substr(0, kMaxChange - 3) + "...";
  }
  const auto time =
      attempt.result.candidate_ms ? fmt::format(" ({:.4g} ms)", *attempt.result.candidate_ms) : "";
  return fmt::format("  round {} · {} · {}{} → {}\n", attempt.round, attempt.proposer, change, time,
                     attempt.result.summary);
}

nlohmann::json optimize_report(const OptimizeRun& run) {
  const auto& outcome = run.outcome;
  nlohmann::json speedups = nlohmann::json::array();
  for (const double ms : outcome.best_ms_after_round) {
    speedups.push_back(outcome.baseline_ms ? *outcome.baseline_ms / ms : 1.0);
  }
  return {{"schema", "kforge.optimize/1"},
          {"problem", run.problem},
          {"from", run.from},
          {"device", run.device},
          {"proposers", run.proposers},
          {"knobs", knobs_json(run.search, outcome)},
          {"fixed", run.search.fixed},
          {"start_ms", optional_number(outcome.baseline_ms)},
          {"best_ms", optional_number(outcome.best_ms)},
          {"speedup_over_start", outcome.baseline_ms && outcome.best_ms
                                     ? nlohmann::json(*outcome.baseline_ms / *outcome.best_ms)
                                     : nlohmann::json(nullptr)},
          {"speedup_per_round", speedups},
          {"stop_reason", outcome.stop_reason},
          {"evaluations", outcome.evaluations},
          {"roofline_before", roofline_fraction(run.profile_before)},
          {"roofline_after", roofline_fraction(run.profile_after)},
          {"profile_before", run.profile_before},
          {"profile_after", run.profile_after},
          {"attempts", attempts_json(run.search, outcome)}};
}

std::string render_report_text(const nlohmann::json& report) {
  std::string text;
  for (const auto& knob : report["knobs"]) {
    text +=
        fmt::format("  {:<12} {:>6} -> {:<6} ({})\n", knob.value("name", ""), knob["start"].get<long long>(),
                    knob["best"].get<long long>(), knob.value("where", ""));
  }
  const auto& speedup = report["speedup_over_start"];
  text +=
      fmt::format("{} evaluations; {}; stopped: {}\n", report["evaluations"].get<std::size_t>(),
                  speedup.is_number() ? fmt::format("best {:.3f} ms, {:.2f}x the start ({:.3f} ms)",
                                                    report["best_ms"].get<double>(), speedup.get<double>(),
                                                    report["start_ms"].get<double>())
                                      : std::string("no timing"),
                  report.value("stop_reason", ""));
  text += fmt::format("roofline: {} before, {} after\n", percent(report["roofline_before"]),
                      percent(report["roofline_after"]));
  return text;
}

std::string render_report_html(const nlohmann::json& report) {
  std::string knobs;
  for (const auto& knob : report["knobs"]) {
    knobs += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                         escape_html(knob.value("name", "")), escape_html(knob.value("kind", "")),
                         escape_html(knob.value("where", "")), knob["start"].get<long long>(),
                         knob["best"].get<long long>());
  }
  std::string attempts;
  for (const auto& attempt : report["attempts"]) {
    std::string values;
    for (const auto& [name, value] : attempt["values"].items()) {
      values += fmt::format("{}={} ", escape_html(name.substr(0, name.find(' '))), value.get<long long>());
    }
    if (attempt["file"].is_string()) {
      values += fmt::format("<a href=\"{0}\">{0}</a> ", escape_html(attempt["file"].get<std::string>()));
    }
    values += escape_html(attempt.value("idea", ""));
    attempts += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        attempt.value("accepted", false) ? "ok" : "bad", attempt["round"].get<int>(),
        escape_html(attempt.value("proposer", "")), escape_html(attempt.value("measurement", "")), values,
        attempt["ms"].is_number() ? fmt::format("{:.4f}", attempt["ms"].get<double>()) : "-",
        escape_html(attempt.value("summary", "")));
  }
  const auto& speedup = report["speedup_over_start"];
  return fmt::format(
      R"(<!doctype html><html><head><meta charset="utf-8"><title>kforge optimize: {0}</title>)"
      R"(<style>body{{font:14px sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse;margin:1em 0}})"
      R"(td,th{{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}})"
      R"(tr.bad td{{color:#a00}}</style></head><body>)"
      R"(<h1>kforge optimize</h1><p>problem <code>{0}</code>, from <code>{1}</code></p>)"
      R"(<p><b>{2}</b> over the start after {3} evaluations; stopped: {4}.</p>)"
      R"(<h2>Speedup over the start, per round</h2>{5})"
      R"(<h2>Roofline before and after</h2><p>time-weighted fraction of the roofline: {6} before, {7} after</p>)"
      R"(<table><tr><th></th><th>kernel</th><th>bound</th><th>roofline</th><th>first finding</th></tr>{8}{9}</table>)"
      R"(<h2>Knobs</h2><table><tr><th>knob</th><th>kind</th><th>where</th><th>start</th><th>best</th></tr>{10}</table>)"
      R"(<h2>Attempts</h2><table><tr><th>round</th><th>proposer</th><th>timing</th><th>change</th><th>ms</th><th>verdict</th></tr>{11})"
      R"(</table></body></html>)",
      escape_html(report.value("problem", "")), escape_html(report.value("from", "")),
      speedup.is_number() ? fmt::format("{:.2f}x", speedup.get<double>()) : std::string("no timing"),
      report["evaluations"].get<std::size_t>(), escape_html(report.value("stop_reason", "")),
      speedup_chart(report["speedup_per_round"]), percent(report["roofline_before"]),
      percent(report["roofline_after"]), profile_rows(report["profile_before"], "before"),
      profile_rows(report["profile_after"], "after"), knobs, attempts);
}

}  // namespace kforge::optimize
