#include "verify/entry_point_names.hpp"

#include <array>
#include <string_view>
#include <utility>

namespace kforge::verify {
namespace {

void replace_all(std::string& text, std::string_view from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

void rename(std::string& text, const std::string& entry) {
  const std::array<std::pair<std::string_view, std::string>, 4> words{{
      {"ModelNew.forward", entry},
      {"in forward or in a function it calls", "in " + entry + " or in a function it calls"},
      {"launched from forward", "launched from " + entry},
      {"ModelNew built", "the adapter calling " + entry + " built"},
  }};
  for (const auto& [from, to] : words) {
    replace_all(text, from, to);
  }
}

}  // namespace

void name_entry_point(StageResult& stage, const std::string& entry) {
  rename(stage.summary, entry);
  for (auto& finding : stage.findings) {
    rename(finding.message, entry);
  }
}

void name_entry_point(Verdict& verdict, const std::string& entry) {
  for (auto& stage : verdict.stages) {
    name_entry_point(stage, entry);
  }
  if (verdict.error) {
    rename(verdict.error->message, entry);
  }
}

}  // namespace kforge::verify
