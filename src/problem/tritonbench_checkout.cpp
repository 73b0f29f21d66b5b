#include "problem/tritonbench_checkout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "problem/kernel_problem.hpp"
#include "source/text_file.hpp"

namespace kforge::problem {
namespace {

namespace fs = std::filesystem;

std::string folder_name(TritonBenchChannel channel) {
  return channel == TritonBenchChannel::G ? "TritonBench_G_v1" : "TritonBench_T_v1";
}

std::string without(std::string text, std::string_view piece) {
  for (auto at = text.find(piece); at != std::string::npos; at = text.find(piece, at)) {
    text.erase(at, piece.size());
  }
  return text;
}

std::string without_chat_tokens(std::string text) {
  return without(without(std::move(text), "<|im_end|>"), "<|EOT|>");
}

// The gold files by stem.
std::map<std::string, fs::path> gold_files(const fs::path& folder) {
  std::map<std::string, fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".py") {
      files[entry.path().stem().string()] = entry.path();
    }
  }
  return files;
}

// The channel's metadata (a JSON array; TritonBench also ships it as .jsonl). Empty when absent.
nlohmann::json metadata(const fs::path& data, TritonBenchChannel channel) {
  for (const char* extension : {".json", ".jsonl"}) {
    const auto path = data / (folder_name(channel) + extension);
    std::error_code error;
    if (!fs::is_regular_file(path, error)) {
      continue;
    }
    const auto text = source::read_text_file(path);
    auto parsed = nlohmann::json::parse(text, nullptr, false);
    if (parsed.is_array()) {
      return parsed;
    }
    nlohmann::json lines = nlohmann::json::array();
    std::size_t start = 0;
    while (start < text.size()) {
      auto end = text.find('\n', start);
      end = end == std::string::npos ? text.size() : end;
      auto line = nlohmann::json::parse(text.substr(start, end - start), nullptr, false);
      if (line.is_object()) {
        lines.push_back(std::move(line));
      }
      start = end + 1;
    }
    if (lines.empty()) {
      throw std::invalid_argument(fmt::format("{}: expected a JSON array of the items", path.string()));
    }
    return lines;
  }
  return nlohmann::json::array();
}

std::string stem_of(const std::string& file) { return fs::path(file).stem().string(); }

// G: the answer's label is (contains) the gold code of exactly the item whose "output" holds it.
std::optional<std::string> match_label(const std::string& label, const nlohmann::json& items,
                                       std::set<std::string>& used) {
  const auto gold = without_chat_tokens(label);
  if (gold.empty()) {
    return std::nullopt;
  }
  for (const auto& item : items) {
    const auto file = item.value("file", std::string());
    if (!file.empty() && !used.contains(file) &&
        item.value("output", std::string()).find(gold) != std::string::npos) {
      used.insert(file);
      return stem_of(file);
    }
  }
  return std::nullopt;
}

// G, when the label is no item's gold code (TritonBench's published answers hold one item,
// context_attn_nopad, with an older gold as label; its own script matches that one by hand): the instruction
// holds exactly one item's instruction ("comp_instru" or "simp_instru").
std::optional<std::string> match_instruction(const std::string& instruction, const nlohmann::json& items,
                                             std::set<std::string>& used) {
  std::vector<std::string> found;
  for (const auto& item : items) {
    const auto file = item.value("file", std::string());
    for (const char* key : {"comp_instru", "simp_instru"}) {
      const auto text = item.value(key, std::string());
      if (!file.empty() && !used.contains(file) && !text.empty() &&
          instruction.find(text) != std::string::npos) {
        found.push_back(file);
        break;
      }
    }
  }
  if (found.size() != 1) {
    return std::nullopt;
  }
  used.insert(found.front());
  return stem_of(found.front());
}

// T: the instruction's functional description is part of exactly one item's description.
std::optional<std::string> match_description(const std::string& instruction, const nlohmann::json& items) {
  constexpr std::string_view kStart = "Functional Description: ";
  constexpr std::string_view kEnd = "Wrapper Entry Information:";
  const auto start = instruction.rfind(kStart);
  if (start == std::string::npos) {
    return std::nullopt;
  }
  const auto from = start + kStart.size();
  const auto end = instruction.find(kEnd, from);
  auto description =
      without(instruction.substr(from, end == std::string::npos ? std::string::npos : end - from), "\n");
  description.erase(description.find_last_not_of(" \t\r") + 1);
  if (description.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> found;
  for (const auto& item : items) {
    if (without(item.value("description", std::string()), "\n").find(description) != std::string::npos) {
      const auto file = item.value("file", std::string());
      found.push_back(file.empty() ? item.value("name", std::string()) : stem_of(file));
    }
  }
  return found.size() == 1 ? std::optional(found.front()) : std::nullopt;
}

// The instruction of a TritonBench answer line: its "instruction", else its first string (TritonBench
// reads the first key).
std::string instruction_of(const nlohmann::json& line) {
  if (line.contains("instruction") && line["instruction"].is_string()) {
    return line["instruction"];
  }
  for (const auto& [key, value] : line.items()) {
    if (value.is_string()) {
      return value;
    }
  }
  return {};
}

struct AnswerSource {
  const std::map<std::string, fs::path>& gold;
  const nlohmann::json& items;
  TritonBenchChannel channel;
  std::set<std::string> used_labels;
};

// The item an answer answers (its stem), or why it answers none.
struct AnswerMatch {
  std::optional<std::string> stem;
  std::string why_none;
};

// One JSON Lines answer's item.
AnswerMatch answer_item(const nlohmann::json& line, AnswerSource& source) {
  if (!line.is_object() || !line.contains("predict") || !line["predict"].is_string()) {
    return {std::nullopt, "expected an object with \"predict\""};
  }
  for (const char* key : {"file", "name"}) {
    if (line.contains(key) && line[key].is_string()) {
      const auto stem = stem_of(line[key].get<std::string>() + (std::string(key) == "name" ? ".py" : ""));
      if (source.gold.contains(stem)) {
        return {stem, ""};
      }
      return {std::nullopt, fmt::format("\"{}\": no gold file {}.py", key, stem)};
    }
  }
  auto stem = source.channel == TritonBenchChannel::G
                  ? match_label(line.value("label", std::string()), source.items, source.used_labels)
                  : match_description(instruction_of(line), source.items);
  if (!stem && source.channel == TritonBenchChannel::G) {
    stem = match_instruction(instruction_of(line), source.items, source.used_labels);
  }
  if (stem && source.gold.contains(*stem)) {
    return {stem, ""};
  }
  return {
      std::nullopt,
      source.channel == TritonBenchChannel::G
          ? R"(its "label" is no item's gold code ("output" in the metadata), nor its instruction one item's)"
          : R"(its instruction's "Functional Description:" is no single item's description)"};
}

void load_jsonl_answers(const fs::path& path, AnswerSource& source, TritonBenchSelection& selection) {
  const auto text = source::read_text_file(path);
  std::size_t start = 0;
  for (int number = 1; start < text.size(); ++number) {
    auto end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end;
    const auto raw = text.substr(start, end - start);
    start = end + 1;
    if (raw.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    const auto origin = fmt::format("{}:{}", path.filename().string(), number);
    const auto line = nlohmann::json::parse(raw, nullptr, false);
    const auto match =
        line.is_discarded() ? AnswerMatch{std::nullopt, "not JSON"} : answer_item(line, source);
    if (!match.stem) {
      selection.unmatched.push_back(fmt::format("{}: {}", origin, match.why_none));
      continue;
    }
    const auto& stem = *match.stem;
    selection.items.push_back(
        {stem, source.gold.at(stem), tritonbench_answer_code(line["predict"].get<std::string>()), origin});
  }
}

void load_folder_answers(const fs::path& folder, const std::map<std::string, fs::path>& gold,
                         TritonBenchSelection& selection) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.is_regular_file() && entry.path().extension() == ".py") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const auto stem = file.stem().string();
    if (!gold.contains(stem)) {
      selection.unmatched.push_back(fmt::format("{}: no gold file {}.py", file.string(), stem));
      continue;
    }
    const auto code = split_test_block(tritonbench_answer_code(source::read_text_file(file))).code;
    selection.items.push_back({stem, gold.at(stem), code, file.string()});
  }
}

}  // namespace

TritonBenchChannel parse_tritonbench_channel(std::string_view text) {
  if (text == "G" || text == "g") {
    return TritonBenchChannel::G;
  }
  if (text == "T" || text == "t") {
    return TritonBenchChannel::T;
  }
  throw std::invalid_argument(
      fmt::format("--channel {}: expected G (GitHub kernels) or T (PyTorch-aligned)", text));
}

std::string tritonbench_answer_code(std::string_view answer) {
  constexpr std::string_view kFence = "```python";
  std::string code(answer);
  if (const auto fence = code.rfind(kFence); fence != std::string::npos) {
    code = code.substr(fence + kFence.size());
    if (const auto closing = code.find("```"); closing != std::string::npos) {
      code = code.substr(0, closing);
    }
  }
  code = without_chat_tokens(std::move(code));
  const auto first = code.find_first_not_of('\n');
  return first == std::string::npos ? std::string() : code.substr(first);
}

TritonBenchSelection load_tritonbench(const fs::path& checkout, TritonBenchChannel channel,
                                      const fs::path& predictions, const std::vector<std::string>& only) {
  const auto data = checkout / "data";
  const auto folder = data / folder_name(channel);
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    throw std::invalid_argument(
        fmt::format("{} is not a TritonBench checkout: expected the gold files in {} (git clone "
                    "https://github.com/thunlp/TritonBench)",
                    checkout.string(), (fs::path("data") / folder_name(channel)).string()));
  }
  const auto gold = gold_files(folder);
  if (gold.empty()) {
    throw std::invalid_argument(fmt::format("{} holds no .py gold files", folder.string()));
  }
  for (const auto& name : only) {
    if (!gold.contains(name)) {
      throw std::invalid_argument(
          fmt::format("--items {}: no gold file {}.py in {}", name, name, folder.string()));
    }
  }
  TritonBenchSelection selection;
  if (predictions.empty()) {
    for (const auto& [stem, file] : gold) {
      selection.items.push_back({stem, file, std::nullopt, "gold"});
    }
  } else if (fs::is_directory(predictions, error)) {
    load_folder_answers(predictions, gold, selection);
  } else {
    const auto items = metadata(data, channel);
    AnswerSource source{gold, items, channel, {}};
    load_jsonl_answers(predictions, source, selection);
  }
  if (!only.empty()) {
    std::erase_if(selection.items, [&](const TritonBenchItem& item) {
      return std::find(only.begin(), only.end(), item.name) == only.end();
    });
  }
  return selection;
}

}  // namespace kforge::problem
