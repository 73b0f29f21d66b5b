#include "runner/scratch_space.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

namespace kforge::runner {
namespace {

std::filesystem::path temp_root() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read once at start-up
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? std::filesystem::path(tmp) : std::filesystem::path("/tmp");
}

}  // namespace

ScratchSpace ScratchSpace::create() {
  std::string pattern = (temp_root() / "kforge-XXXXXX").string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    throw std::runtime_error(fmt::format("cannot create a temporary folder under {}: {} (set TMPDIR)",
                                         temp_root().string(), std::strerror(errno)));
  }
  std::filesystem::path directory(buffer.data());
  // The folder's random suffix keeps concurrent evaluations' shared-memory names apart.
  std::string prefix = fmt::format("kf-{}-{}", getpid(), directory.filename().string().substr(7));
  return {std::move(directory), std::move(prefix)};
}

ScratchSpace::ScratchSpace(std::filesystem::path directory, std::string shm_prefix)
    : directory_(std::move(directory)), shm_prefix_(std::move(shm_prefix)) {}

ScratchSpace::ScratchSpace(ScratchSpace&& other) noexcept
    : directory_(std::move(other.directory_)), shm_prefix_(std::move(other.shm_prefix_)) {
  other.directory_.clear();
  other.shm_prefix_.clear();
}

ScratchSpace::~ScratchSpace() {
  if (!directory_.empty()) {
    std::error_code error;
    std::filesystem::remove_all(directory_, error);
  }
  remove_shared_memory();
}

void ScratchSpace::remove_shared_memory() const {
  if (shm_prefix_.empty()) {
    return;
  }
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    if (entry.path().filename().string().starts_with(shm_prefix_)) {
      std::filesystem::remove(entry.path(), error);
    }
  }
}

}  // namespace kforge::runner
