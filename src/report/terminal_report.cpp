#include "report/terminal_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace kforge::report {
namespace {

struct Palette {
  bool enabled;
  std::string paint(const std::string& text, const char* code) const {
    return enabled ? fmt::format("\033[{}m{}\033[0m", code, text) : text;
  }
};

std::string status_label(const std::string& status, const Palette& palette) {
  if (status == "passed") {
    return palette.paint("PASS", "32");
  }
  if (status == "failed") {
    return palette.paint("FAIL", "31;1");
  }
  if (status == "skipped") {
    return palette.paint("SKIP", "33");
  }
  return palette.paint("----", "2");
}

std::string text_of(const nlohmann::json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string()
             ? object[key].get<std::string>()
             : "";
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
  if (!device.is_object()) {
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

std::string stage_evidence(const nlohmann::json& stage) {
  std::string text;
  for (const auto& finding : stage.value("findings", nlohmann::json::array())) {
    text += fmt::format("{}:{} [{}] {}\n", finding.value("line", 0), finding.value("column", 0),
                        text_of(finding, "rule"), text_of(finding, "message"));
  }
  const auto details = stage.value("details", nlohmann::json::object());
  if (details.is_object() && details.contains("error")) {
    const auto& error = details["error"];
    if (const auto traceback = text_of(error, "traceback"); !traceback.empty()) {
      text += "candidate traceback (its own frames):\n" + indent(traceback, "  ");
    }
    if (const auto log = text_of(error, "log_tail"); !log.empty()) {
      text += "worker log:\n" + indent(log, "  ");
    }
  }
  if (details.is_object() && details.contains("trials") && details["trials"].is_array() &&
      !details["trials"].empty()) {
    const auto& last = details["trials"].back();
    if (!last.value("passed", true)) {
      for (const auto& failure : last.value("failures", nlohmann::json::array())) {
        text += "- " + (failure.is_string() ? failure.get<std::string>() : failure.dump()) + "\n";
      }
    }
  }
  return text;
}

bool any_stage_ran(const nlohmann::json& verdict) {
  const auto stages = verdict.value("stages", nlohmann::json::array());
  return std::any_of(stages.begin(), stages.end(),
                     [](const nlohmann::json& stage) { return text_of(stage, "status") != "not_run"; });
}

}  // namespace

std::string render_header(const std::string& problem, const std::string& candidate) {
  return fmt::format("problem   {}\ncandidate {}\n", problem, candidate);
}

std::string render_device(const nlohmann::json& device) { return device_line(device); }

std::string render_stage(const nlohmann::json& stage, bool color) {
  const Palette palette{color};
  const auto status = text_of(stage, "status");
  std::string out = fmt::format("  {} {:<12} {}\n", status_label(status, palette), text_of(stage, "name"),
                                text_of(stage, "summary"));
  if (status == "failed") {
    out += indent(stage_evidence(stage), "         ");
  }
  return out;
}

std::string render_outcome(const nlohmann::json& verdict, bool color) {
  const Palette palette{color};
  std::string out;
  const auto outcome = text_of(verdict, "outcome");
  if (outcome == "accepted") {
    out += palette.paint("ACCEPTED", "32;1");
  } else if (outcome == "rejected") {
    out += palette.paint("REJECTED", "31;1");
  } else {
    out += palette.paint("ERROR", "35;1");
  }
  out += fmt::format(" {} ({:.1f} s)\n", text_of(verdict, "summary"), verdict.value("duration_s", 0.0));
  if (verdict.contains("stored") && verdict["stored"].is_object()) {
    out += fmt::format("(from the result store: evaluated {}; pass --fresh to evaluate again)\n",
                       text_of(verdict["stored"], "stored_at"));
  }
  return out;
}

std::string render_terminal(const nlohmann::json& verdict, bool color) {
  std::string out = render_header(text_of(verdict.value("problem", nlohmann::json()), "path"),
                                  text_of(verdict.value("candidate", nlohmann::json()), "path"));
  out += device_line(verdict.value("device", nlohmann::json()));
  if (any_stage_ran(verdict)) {  // an evaluation that never started (a missing file) has no stage to show
    for (const auto& stage : verdict.value("stages", nlohmann::json::array())) {
      out += render_stage(stage, color);
    }
  }
  return out + render_outcome(verdict, color);
}

}  // namespace kforge::report
