#pragma once

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace kforge::serve {

// Problems registered with the service: each source is written once under `root`/<id>/problem.py,
// where the id is a prefix of the source's SHA-256, so registering the same source again returns
// the same id (also after a restart: the folder is read back at start).
class ProblemRegistry {
 public:
  explicit ProblemRegistry(std::filesystem::path root);

  // The id the service gives this source: the first 16 hex digits of its SHA-256.
  static std::string id_of(const std::string& source);

  // The id of this source; writes it on first sight. Throws std::runtime_error when it cannot.
  std::string add(const std::string& source);
  // problem.py of a registered id, or none.
  std::optional<std::filesystem::path> find(const std::string& id) const;
  std::size_t size() const;

 private:
  std::filesystem::path root_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::filesystem::path> problems_;
};

}  // namespace kforge::serve
