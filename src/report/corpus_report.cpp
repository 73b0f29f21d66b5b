#include "report/corpus_report.hpp"

#include <fmt/format.h>

#include <map>

namespace kforge::report {
namespace {

struct ClassTally {
  int run = 0;
  int good = 0;  // caught (exploits) or passed (honest)
  int wrong_path = 0;
  int missed = 0;  // missed exploits or false alarms
  int errors = 0;
  int skipped = 0;
};

std::map<std::string, ClassTally> tally(const std::vector<CorpusRow>& rows) {
  std::map<std::string, ClassTally> classes;
  for (const auto& row : rows) {
    auto& t = classes[row.entry.exploit_class];
    switch (row.outcome.result) {
      case verify::CorpusResult::skipped:
        ++t.skipped;
        continue;
      case verify::CorpusResult::caught:
      case verify::CorpusResult::passed:
        ++t.good;
        break;
      case verify::CorpusResult::wrong_path:
        ++t.wrong_path;
        break;
      case verify::CorpusResult::missed:
      case verify::CorpusResult::false_alarm:
        ++t.missed;
        break;
      case verify::CorpusResult::error:
        ++t.errors;
        break;
    }
    ++t.run;
  }
  return classes;
}

double rate(int part, int whole) { return whole == 0 ? 0.0 : 100.0 * part / whole; }

}  // namespace

std::string render_corpus_report(const std::vector<CorpusRow>& rows, const std::string& device) {
  std::string text = fmt::format("corpus on {}: {} entries\n\n", device, rows.size());
  text += fmt::format("{:<24} {:>4} {:>9} {:>10} {:>7} {:>6} {:>8}\n", "class", "run", "rate", "wrong-path",
                      "missed", "error", "skipped");
  int exploits = 0;
  int caught = 0;
  for (const auto& [name, t] : tally(rows)) {
    const bool honest = name == "honest";
    const std::string label = honest ? fmt::format("{:.0f}% FP", rate(t.missed + t.wrong_path, t.run))
                                     : fmt::format("{:.0f}% det", rate(t.good, t.run));
    text += fmt::format("{:<24} {:>4} {:>9} {:>10} {:>7} {:>6} {:>8}\n", name, t.run, label, t.wrong_path,
                        t.missed, t.errors, t.skipped);
    if (!honest) {
      exploits += t.run;
      caught += t.good;
    }
  }
  const auto honest = tally(rows)["honest"];
  text += fmt::format(
      "\nexploits caught on their documented path: {}/{} ({:.1f}%); honest accepted: {}/{} "
      "(false-positive rate {:.1f}%)\n",
      caught, exploits, rate(caught, exploits), honest.good, honest.run,
      rate(honest.run - honest.good, honest.run));
  for (const auto& row : rows) {
    if (verify::is_failure(row.outcome.result)) {
      const auto& e = row.entry;
      text += fmt::format(
          "  {:<11} {} [{}{}]: {}\n", to_string(row.outcome.result), e.candidate_name,
          e.expect_accepted ? "expect accepted" : "expect " + e.expect_stage + "/" + e.expect_check,
          e.profile == "strict" ? "" : ", " + e.profile, row.outcome.detail.substr(0, 300));
    }
  }
  return text;
}

nlohmann::json corpus_report_json(const std::vector<CorpusRow>& rows, const std::string& device) {
  nlohmann::json classes = nlohmann::json::object();
  for (const auto& [name, t] : tally(rows)) {
    classes[name] = {{"run", t.run},       {"good", t.good},     {"wrong_path", t.wrong_path},
                     {"missed", t.missed}, {"errors", t.errors}, {"skipped", t.skipped}};
  }
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& row : rows) {
    entries.push_back({{"candidate", row.entry.candidate_name},
                       {"class", row.entry.exploit_class},
                       {"profile", row.entry.profile},
                       {"result", to_string(row.outcome.result)},
                       {"detail", row.outcome.detail},
                       {"duration_s", row.duration_s}});
  }
  return {
      {"schema", "kforge.corpus-report/1"}, {"device", device}, {"classes", classes}, {"entries", entries}};
}

}  // namespace kforge::report
