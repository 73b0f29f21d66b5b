#pragma once

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace kforge::serve {

// A problem the service can evaluate against, and whether its code is the operator's own.
struct RegisteredProblem {
  std::filesystem::path path;  // problem.py
  // True for problems from the operator's folder (--trusted-problems): their judge runs unsandboxed.
  // Sources sent by clients are untrusted code: their judge runs in the sandbox (docs/sandbox.md).
  bool trusted = false;
};

// Problems registered with the service: each source is written once under `root`/<id>/problem.py,
// where the id is a prefix of the source's SHA-256, so registering the same source again returns
// the same id (also after a restart: the folder is read back at start). Problems of the operator's own
// folder are known by the same ids, so a client that sends the same source gets the trusted problem.
class ProblemRegistry {
 public:
  explicit ProblemRegistry(std::filesystem::path root);

  // The id the service gives this source: the first 16 hex digits of its SHA-256.
  static std::string id_of(const std::string& source);

  // Adds the problems of the operator's folder (kforge's DIR/<name>/problem.py or KernelBench's
  // DIR/<id>_<Name>.py layout) as trusted; returns how many. Throws std::runtime_error when the folder
  // holds no problem or one cannot be read.
  std::size_t add_trusted_folder(const std::filesystem::path& folder);
  // The id of this source; writes it on first sight. Throws std::runtime_error when it cannot.
  std::string add(const std::string& source);
  // The problem of a registered id, or none.
  std::optional<RegisteredProblem> find(const std::string& id) const;
  std::size_t size() const;

 private:
  std::filesystem::path root_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, RegisteredProblem> problems_;
};

}  // namespace kforge::serve
