#include "store/result_store.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>

#include "runner/environment_variable.hpp"
#include "store/content_hash.hpp"

namespace kforge::store {
namespace {

namespace fs = std::filesystem;
constexpr int kBusyTimeoutMs = 60'000;
constexpr int kSchemaVersion = 1;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS verdicts (
  key TEXT PRIMARY KEY,
  problem_hash TEXT NOT NULL,
  candidate_hash TEXT NOT NULL,
  gpu TEXT NOT NULL,
  versions TEXT NOT NULL,
  settings TEXT NOT NULL,
  outcome TEXT NOT NULL,
  verdict TEXT NOT NULL,
  stored_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS verdicts_by_problem ON verdicts (problem_hash, candidate_hash);
CREATE TABLE IF NOT EXISTS baselines (
  key TEXT PRIMARY KEY,
  problem_hash TEXT NOT NULL,
  gpu TEXT NOT NULL,
  versions TEXT NOT NULL,
  settings TEXT NOT NULL,
  kind TEXT NOT NULL,
  baseline TEXT NOT NULL,
  stored_at TEXT NOT NULL);
)sql";

std::string now_utc() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

// The JSON object in the first column of the query's next row; none when there is no row or the row
// is unreadable (the caller evaluates again and overwrites it).
std::optional<nlohmann::json> first_json_object(SQLite::Statement& query) {
  if (!query.executeStep()) {
    return std::nullopt;
  }
  auto value = nlohmann::json::parse(query.getColumn(0).getString(), nullptr, false);
  if (value.is_discarded() || !value.is_object()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::string EvaluationIdentity::key() const {
  return sha256_hex(nlohmann::json{
      {"schema", kSchemaVersion},
      {"problem", problem_hash},
      {"candidate", candidate_hash},
      {"gpu", gpu},
      {"versions", versions},
      {"settings",
       settings}}.dump());
}

std::string BaselineIdentity::key() const {
  return sha256_hex(nlohmann::json{
      {"schema", kSchemaVersion},
      {"problem", problem_hash},
      {"gpu", gpu},
      {"versions", versions},
      {"settings", settings},
      {"kind", kind}}.dump());
}

fs::path ResultStore::default_path() {
  if (const auto explicit_path = runner::environment_variable("KFORGE_STORE"); !explicit_path.empty()) {
    return explicit_path;
  }
  if (const auto cache = runner::environment_variable("XDG_CACHE_HOME"); !cache.empty()) {
    return fs::path(cache) / "kforge" / "results.sqlite";
  }
  if (const auto home = runner::environment_variable("HOME"); !home.empty()) {
    return fs::path(home) / ".cache" / "kforge" / "results.sqlite";
  }
  return fs::temp_directory_path() / "kforge" / "results.sqlite";
}

std::unique_ptr<ResultStore> ResultStore::open(const fs::path& path) {
  try {
    if (path.has_parent_path()) {
      fs::create_directories(path.parent_path());
    }
    return std::make_unique<ResultStore>(path);
  } catch (const std::exception& error) {
    throw std::runtime_error(fmt::format(
        "cannot open the result store {}: {} (pass --store PATH to use another file, or --no-store)",
        path.string(), error.what()));
  }
}

ResultStore::ResultStore(const fs::path& path)
    : path_(path), database_(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, kBusyTimeoutMs) {
  database_.exec("PRAGMA journal_mode=WAL");
  database_.exec("PRAGMA synchronous=NORMAL");  // WAL + NORMAL: a commit survives a crash of kforge
  SQLite::Transaction transaction(database_);
  database_.exec(kSchema);
  SQLite::Statement version(database_, "SELECT value FROM meta WHERE name = 'schema'");
  if (version.executeStep()) {
    const int found = std::stoi(version.getColumn(0).getString());
    if (found != kSchemaVersion) {
      throw std::runtime_error(
          fmt::format("the file has schema version {}, this kforge writes {}", found, kSchemaVersion));
    }
  } else {
    SQLite::Statement insert(database_, "INSERT INTO meta (name, value) VALUES ('schema', ?)");
    insert.bind(1, std::to_string(kSchemaVersion));
    insert.exec();
  }
  transaction.commit();
}

std::optional<nlohmann::json> ResultStore::find_verdict(const EvaluationIdentity& identity) {
  const std::lock_guard lock(mutex_);
  SQLite::Statement query(database_, "SELECT verdict, stored_at FROM verdicts WHERE key = ?");
  query.bind(1, identity.key());
  auto verdict = first_json_object(query);
  if (verdict) {
    (*verdict)["stored"] = {{"key", identity.key()}, {"stored_at", query.getColumn(1).getString()}};
  }
  return verdict;
}

void ResultStore::put_verdict(const EvaluationIdentity& identity, const nlohmann::json& verdict) {
  const std::lock_guard lock(mutex_);
  SQLite::Statement insert(
      database_,
      "INSERT OR REPLACE INTO verdicts (key, problem_hash, candidate_hash, gpu, versions, "
      "settings, outcome, verdict, stored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, identity.key());
  insert.bind(2, identity.problem_hash);
  insert.bind(3, identity.candidate_hash);
  insert.bind(4, identity.gpu);
  insert.bind(5, identity.versions.dump());
  insert.bind(6, identity.settings.dump());
  insert.bind(7, verdict.value("outcome", "unknown"));
  insert.bind(8, verdict.dump());
  insert.bind(9, now_utc());
  insert.exec();
}

std::optional<nlohmann::json> ResultStore::find_baseline(const BaselineIdentity& identity) {
  const std::lock_guard lock(mutex_);
  SQLite::Statement query(database_, "SELECT baseline FROM baselines WHERE key = ?");
  query.bind(1, identity.key());
  return first_json_object(query);
}

void ResultStore::put_baseline(const BaselineIdentity& identity, const nlohmann::json& baseline) {
  const std::lock_guard lock(mutex_);
  SQLite::Statement insert(
      database_,
      "INSERT OR REPLACE INTO baselines (key, problem_hash, gpu, versions, settings, kind, "
      "baseline, stored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, identity.key());
  insert.bind(2, identity.problem_hash);
  insert.bind(3, identity.gpu);
  insert.bind(4, identity.versions.dump());
  insert.bind(5, identity.settings.dump());
  insert.bind(6, identity.kind);
  insert.bind(7, baseline.dump());
  insert.bind(8, now_utc());
  insert.exec();
}

std::size_t ResultStore::verdict_count() {
  const std::lock_guard lock(mutex_);
  SQLite::Statement query(database_, "SELECT COUNT(*) FROM verdicts");
  query.executeStep();
  return static_cast<std::size_t>(query.getColumn(0).getInt64());
}

}  // namespace kforge::store
