#include "serve/problem_registry.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "problem/problem_catalog.hpp"
#include "source/text_file.hpp"
#include "store/content_hash.hpp"

namespace kforge::serve {
namespace {

constexpr std::size_t kIdLength = 16;  // 64 bits of SHA-256: collisions are not a practical concern here

bool is_id(const std::string& name) {
  return name.size() == kIdLength && name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

ProblemRegistry::ProblemRegistry(std::filesystem::path root) : root_(std::move(root)) {
  std::error_code error;
  std::filesystem::create_directories(root_, error);
  if (error) {
    throw std::runtime_error(
        fmt::format("cannot create the problem folder {}: {}", root_.string(), error.message()));
  }
  for (const auto& entry : std::filesystem::directory_iterator(root_, error)) {
    const auto name = entry.path().filename().string();
    if (is_id(name) && std::filesystem::is_regular_file(entry.path() / "problem.py", error)) {
      problems_[name] = {entry.path() / "problem.py", false};
    }
  }
}

std::string ProblemRegistry::id_of(const std::string& source) {
  return store::sha256_hex(source).substr(0, kIdLength);
}

std::size_t ProblemRegistry::add_trusted_folder(const std::filesystem::path& folder) {
  const auto catalog = problem::ProblemCatalog::from_folder(folder);
  std::size_t added = 0;
  for (const auto& entry : catalog.entries()) {
    const auto id = id_of(source::read_text_file(entry.problem));
    const std::lock_guard lock(mutex_);
    problems_[id] = {std::filesystem::absolute(entry.problem), true};
    ++added;
  }
  return added;
}

std::string ProblemRegistry::add(const std::string& source) {
  auto id = id_of(source);
  const std::lock_guard lock(mutex_);
  if (problems_.contains(id)) {
    return id;
  }
  const auto folder = root_ / id;
  std::filesystem::create_directories(folder);
  // Written to a temporary name and renamed: a crash never leaves a half-written problem behind.
  const auto temporary = folder / "problem.py.partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << source;
    if (!out.flush()) {
      throw std::runtime_error(fmt::format("cannot write {}", temporary.string()));
    }
  }
  std::filesystem::rename(temporary, folder / "problem.py");
  problems_[id] = {folder / "problem.py", false};
  return id;
}

std::optional<RegisteredProblem> ProblemRegistry::find(const std::string& id) const {
  const std::lock_guard lock(mutex_);
  const auto found = problems_.find(id);
  if (found == problems_.end()) {
    return std::nullopt;
  }
  return found->second;
}

std::size_t ProblemRegistry::size() const {
  const std::lock_guard lock(mutex_);
  return problems_.size();
}

}  // namespace kforge::serve
