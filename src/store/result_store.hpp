#pragma once

#include <SQLiteCpp/Database.h>

#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kforge::store {

// What a stored verdict is keyed by: every input that can change it. `key()` is the SHA-256 of all of
// it; the parts are kept in their own columns so a user can query the file.
struct EvaluationIdentity {
  std::string problem_hash;    // SHA-256 of the problem file
  std::string candidate_hash;  // SHA-256 of the candidate text (the raw completion when it came from an LLM)
  std::string gpu;             // GPU model, or "cpu"
  nlohmann::json versions;     // python, torch, triton, kforge engine
  nlohmann::json settings;     // evaluation settings that change the verdict (trials, seed, sizes, ...)
  std::string key() const;
};

// What a stored baseline is keyed by: the problem at its sizes on one GPU model and software stack.
struct BaselineIdentity {
  std::string problem_hash;
  std::string gpu;
  nlohmann::json versions;
  nlohmann::json settings;  // sizes, seed, timing policy
  std::string kind;         // eager | compile
  std::string key() const;
};

// Verdicts and baselines in one SQLite file (WAL journal). Every write is its own transaction, so a
// kill mid-run leaves the finished results and never a corrupt file; several kforge processes may
// write at once (they wait up to 60 s for each other). Thread-safe.
class ResultStore {
 public:
  // Opens or creates the file (and its folder). Throws std::runtime_error saying what is wrong.
  static std::unique_ptr<ResultStore> open(const std::filesystem::path& path);
  // $KFORGE_STORE, else $XDG_CACHE_HOME/kforge/results.sqlite, else ~/.cache/kforge/results.sqlite.
  static std::filesystem::path default_path();

  std::optional<nlohmann::json> find_verdict(const EvaluationIdentity& identity);
  void put_verdict(const EvaluationIdentity& identity, const nlohmann::json& verdict);
  std::optional<nlohmann::json> find_baseline(const BaselineIdentity& identity);
  void put_baseline(const BaselineIdentity& identity, const nlohmann::json& baseline);
  std::size_t verdict_count();

  const std::filesystem::path& path() const { return path_; }

  explicit ResultStore(const std::filesystem::path& path);

 private:
  std::filesystem::path path_;
  std::mutex mutex_;
  SQLite::Database database_;
};

}  // namespace kforge::store
