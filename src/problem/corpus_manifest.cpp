#include "problem/corpus_manifest.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kforge::problem {
namespace {

namespace fs = std::filesystem;

std::string required_string(const nlohmann::json& item, const char* key, std::size_t index) {
  const auto found = item.find(key);
  if (found == item.end() || !found->is_string() || found->get<std::string>().empty()) {
    throw std::runtime_error(
        fmt::format("corpus manifest entry {}: expected a non-empty string \"{}\"", index, key));
  }
  return found->get<std::string>();
}

fs::path existing(const fs::path& path, std::size_t index, const char* what) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    throw std::runtime_error(
        fmt::format("corpus manifest entry {}: {} {} does not exist", index, what, path.string()));
  }
  return fs::absolute(path);
}

CorpusEntry parse_entry(const nlohmann::json& item, std::size_t index, const fs::path& corpus_dir,
                        const fs::path& problems_root) {
  if (!item.is_object()) {
    throw std::runtime_error(fmt::format("corpus manifest entry {}: expected an object", index));
  }
  CorpusEntry entry;
  entry.candidate_name = required_string(item, "candidate", index);
  entry.candidate = existing(corpus_dir / entry.candidate_name, index, "candidate");
  entry.problem =
      existing(problems_root / required_string(item, "problem", index) / "problem.py", index, "problem");
  entry.exploit_class = required_string(item, "class", index);
  const std::string expect = required_string(item, "expect", index);
  if (expect != "accepted" && expect != "rejected") {
    throw std::runtime_error(fmt::format(
        "corpus manifest entry {}: \"expect\" must be accepted or rejected, not {}", index, expect));
  }
  entry.expect_accepted = expect == "accepted";
  if (!entry.expect_accepted) {
    entry.expect_stage = required_string(item, "expect_stage", index);
    entry.expect_check = required_string(item, "expect_check", index);
  }
  entry.profile = item.value("profile", std::string("strict"));
  if (entry.profile != "strict" && entry.profile != "lenient") {
    throw std::runtime_error(
        fmt::format("corpus manifest entry {}: unknown profile {}", index, entry.profile));
  }
  entry.gpu_only = item.value("gpu_only", false);
  entry.cpu_only = item.value("cpu_only", false);
  entry.why = item.value("why", std::string());
  return entry;
}

}  // namespace

CorpusManifest load_corpus_manifest(const fs::path& corpus_dir, const fs::path& problems_root) {
  const fs::path path = corpus_dir / "manifest.json";
  std::ifstream stream(path);
  if (!stream) {
    throw std::runtime_error(
        fmt::format("cannot read {}: a corpus folder holds a manifest.json", path.string()));
  }
  const auto document = nlohmann::json::parse(stream, nullptr, false);
  if (document.is_discarded() || !document.is_array()) {
    throw std::runtime_error(fmt::format("{} is not a JSON list of entries", path.string()));
  }
  CorpusManifest manifest;
  for (std::size_t index = 0; index < document.size(); ++index) {
    manifest.entries.push_back(parse_entry(document[index], index, corpus_dir, problems_root));
  }
  return manifest;
}

}  // namespace kforge::problem
