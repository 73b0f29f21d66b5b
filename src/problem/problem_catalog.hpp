#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kforge::problem {

// One problem of a suite: its name, its reference file, and its reference Triton solution if any.
struct CatalogEntry {
  std::string name;  // folder name (kforge suites) or file stem (KernelBench: "19_ReLU")
  std::filesystem::path problem;
  std::optional<std::filesystem::path> solution;
  std::optional<int> number;  // KernelBench's problem id (the number the file name starts with)
};

// The problems of a folder, by name. Two layouts: kforge's (DIR/<name>/problem.py with an optional
// solution.py) and KernelBench's (DIR/<id>_<Name>.py, one file per problem).
class ProblemCatalog {
 public:
  // Throws std::runtime_error saying what was expected when the folder holds no problem.
  static ProblemCatalog from_folder(const std::filesystem::path& folder);
  // A KernelBench checkout: PATH/KernelBench/level<N> (or PATH/level<N>).
  static ProblemCatalog from_kernelbench(const std::filesystem::path& checkout, int level);

  // By name, by KernelBench id ("19"), or by a path to a problem file; nullptr when unknown.
  const CatalogEntry* find(const std::string& reference) const;
  const std::vector<CatalogEntry>& entries() const { return entries_; }
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path folder_;
  std::vector<CatalogEntry> entries_;
};

}  // namespace kforge::problem
