#include "report/terminal_report.hpp"

#include <fmt/format.h>

#include <sstream>

namespace kforge::report {
namespace {

using verify::StageStatus;

struct Palette {
  bool enabled;
  std::string paint(const std::string& text, const char* code) const {
    return enabled ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
  }
};

std::string status_label(StageStatus status, const Palette& palette) {
  switch (status) {
    case StageStatus::passed:
      return palette.paint("PASS", "32");
    case StageStatus::failed:
      return palette.paint("FAIL", "31;1");
    case StageStatus::skipped:
      return palette.paint("SKIP", "33");
    case StageStatus::not_run:
      return palette.paint("----", "2");
  }
  return "????";
}

std::string indent(const std::string& text, const std::string& prefix) {
  std::istringstream stream(text);
  std::string result;
  for (std::string line; std::getline(stream, line);) {
    result += prefix + line + "\n";
  }
  return result;
}

std::string device_line(const nlohmann::json& device) {
  if (device.empty()) {
    return "";
  }
  std::string line = fmt::format("device   {} ({})", device.value("name", "?"), device.value("device", "?"));
  line += fmt::format(" · torch {} · triton {}", device.value("torch", "?"),
                      device["triton"].is_string() ? device["triton"].get<std::string>() : "?");
  if (device.value("triton_interpreter", false)) {
    line += " · Triton interpreter";
  }
  return line + "\n";
}

std::string stage_evidence(const verify::StageResult& stage) {
  std::string text;
  for (const auto& finding : stage.findings) {
    text += fmt::format("{}:{} [{}] {}\n", finding.location.line, finding.location.column, finding.rule_id,
                        finding.message);
  }
  if (stage.details.contains("error")) {
    const auto& error = stage.details["error"];
    if (error.contains("traceback")) {
      text += "candidate traceback (its own frames):\n" + indent(error["traceback"].get<std::string>(), "  ");
    }
    if (error.contains("log_tail")) {
      text += "worker log:\n" + indent(error["log_tail"].get<std::string>(), "  ");
    }
  }
  if (stage.details.contains("trials") && !stage.details["trials"].empty()) {
    const auto& last = stage.details["trials"].back();
    if (!last.value("passed", true)) {
      for (const auto& failure : last.value("failures", nlohmann::json::array())) {
        text += "- " + failure.get<std::string>() + "\n";
      }
    }
  }
  return text;
}

}  // namespace

std::string render_terminal(const verify::Verdict& verdict, bool color) {
  const Palette palette{color};
  std::string out = fmt::format("problem   {}\ncandidate {}\n", verdict.problem.value("path", "?"),
                                verdict.candidate.value("path", "?"));
  out += device_line(verdict.device);
  for (const auto& stage : verdict.stages) {
    out += fmt::format("  {} {:<12} {}\n", status_label(stage.status, palette), verify::to_string(stage.name),
                       stage.summary);
    if (stage.status == StageStatus::failed) {
      out += indent(stage_evidence(stage), "         ");
    }
  }
  switch (verdict.outcome) {
    case verify::Outcome::accepted:
      out += palette.paint("ACCEPTED", "32;1");
      break;
    case verify::Outcome::rejected:
      out += palette.paint("REJECTED", "31;1");
      break;
    case verify::Outcome::error:
      out += palette.paint("ERROR", "35;1");
      break;
  }
  out += fmt::format(" {} ({:.1f} s)\n", verdict.summary(), verdict.duration_s);
  return out;
}

}  // namespace kforge::report
