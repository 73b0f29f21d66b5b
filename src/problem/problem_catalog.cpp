#include "problem/problem_catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace kforge::problem {
namespace {

namespace fs = std::filesystem;

std::optional<int> leading_number(const std::string& name) {
  std::size_t digits = 0;
  while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits])) != 0) {
    ++digits;
  }
  if (digits == 0 || digits > 6 || (digits < name.size() && name[digits] != '_')) {
    return std::nullopt;
  }
  return std::stoi(name.substr(0, digits));
}

bool is_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

}  // namespace

ProblemCatalog ProblemCatalog::from_folder(const fs::path& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    throw std::runtime_error(
        fmt::format("problem folder {} does not exist or is not a folder", folder.string()));
  }
  ProblemCatalog catalog;
  catalog.folder_ = folder;
  for (const auto& item : fs::directory_iterator(folder, error)) {
    const auto name = item.path().filename().string();
    if (name.starts_with(".") || name.starts_with("_")) {
      continue;
    }
    if (item.is_directory() && is_file(item.path() / "problem.py")) {
      const auto solution = item.path() / "solution.py";
      catalog.entries_.push_back({name, item.path() / "problem.py",
                                  is_file(solution) ? std::optional<fs::path>(solution) : std::nullopt,
                                  leading_number(name)});
    } else if (item.is_regular_file() && item.path().extension() == ".py") {
      const auto stem = item.path().stem().string();
      catalog.entries_.push_back({stem, item.path(), std::nullopt, leading_number(stem)});
    }
  }
  if (catalog.entries_.empty()) {
    throw std::runtime_error(fmt::format(
        "no problems in {}: expected <name>/problem.py folders (kforge suites) or <id>_<Name>.py files "
        "(KernelBench levels)",
        folder.string()));
  }
  std::sort(catalog.entries_.begin(), catalog.entries_.end(), [](const auto& a, const auto& b) {
    return a.number != b.number ? a.number.value_or(1 << 30) < b.number.value_or(1 << 30) : a.name < b.name;
  });
  return catalog;
}

ProblemCatalog ProblemCatalog::from_kernelbench(const fs::path& checkout, int level) {
  const auto level_dir = fmt::format("level{}", level);
  for (const auto& candidate : {checkout / "KernelBench" / level_dir, checkout / level_dir}) {
    std::error_code error;
    if (fs::is_directory(candidate, error)) {
      return from_folder(candidate);
    }
  }
  throw std::runtime_error(fmt::format("no KernelBench level {} under {}: expected {}/KernelBench/{}/", level,
                                       checkout.string(), checkout.string(), level_dir));
}

const CatalogEntry* ProblemCatalog::find(const std::string& reference) const {
  for (const auto& entry : entries_) {
    if (entry.name == reference) {
      return &entry;
    }
  }
  if (const auto number = leading_number(reference + "_");
      number && reference.find('_') == std::string::npos) {
    for (const auto& entry : entries_) {
      if (entry.number == number) {
        return &entry;
      }
    }
  }
  std::error_code error;
  const auto wanted = fs::weakly_canonical(reference, error);
  for (const auto& entry : entries_) {
    if (!error && fs::weakly_canonical(entry.problem, error) == wanted) {
      return &entry;
    }
  }
  return nullptr;
}

}  // namespace kforge::problem
