#include "problem/corpus_selection.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace kforge::problem {
namespace {

bool names_entry(const CorpusEntry& entry, const std::string& name) {
  return entry.exploit_class == name || entry.candidate_name == name ||
         std::filesystem::path(entry.candidate_name).filename() == name ||
         std::filesystem::path(entry.candidate_name).stem() == name;
}

}  // namespace

std::vector<CorpusEntry> select_corpus_entries(const CorpusManifest& manifest,
                                               const std::vector<std::string>& only) {
  for (const auto& name : only) {
    const bool known = std::any_of(manifest.entries.begin(), manifest.entries.end(),
                                   [&](const CorpusEntry& entry) { return names_entry(entry, name); });
    if (!known) {
      std::set<std::string> classes;
      for (const auto& entry : manifest.entries) {
        classes.insert(entry.exploit_class);
      }
      throw std::invalid_argument(fmt::format(
          "--only {}: no entry of that class and no candidate of that name; the classes are {} (or name a "
          "candidate file, e.g. {})",
          name, fmt::join(classes, ", "),
          manifest.entries.empty() ? std::string("exploits/CLASS/FILE.py")
                                   : manifest.entries.front().candidate_name));
    }
  }
  std::vector<CorpusEntry> selected;
  for (const auto& entry : manifest.entries) {
    if (only.empty() || std::any_of(only.begin(), only.end(),
                                    [&](const std::string& name) { return names_entry(entry, name); })) {
      selected.push_back(entry);
    }
  }
  return selected;
}

}  // namespace kforge::problem
