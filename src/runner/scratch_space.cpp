#include "runner/scratch_space.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "runner/environment_variable.hpp"

namespace kforge::runner {
namespace {

std::filesystem::path temp_root() {
  const auto tmp = environment_variable("TMPDIR");
  return !tmp.empty() ? std::filesystem::path(tmp) : std::filesystem::path("/tmp");
}

// mkdtemp: a new folder only this user can enter, with a random suffix.
std::filesystem::path make_private_directory(const std::filesystem::path& pattern) {
  std::string text = pattern.string();
  std::vector<char> buffer(text.begin(), text.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    throw std::runtime_error(
        fmt::format("cannot create a temporary folder {}: {} (set TMPDIR)", text, std::strerror(errno)));
  }
  return {buffer.data()};
}

constexpr const char* kSharedMemory = "/dev/shm";

bool has_shared_memory() {
  std::error_code error;
  return std::filesystem::is_directory(kSharedMemory, error);
}

}  // namespace

ScratchSpace ScratchSpace::create() {
  return create_under(temp_root(),
                      has_shared_memory() ? std::filesystem::path(kSharedMemory) : std::filesystem::path());
}

ScratchSpace ScratchSpace::create_with_transfer_under(const std::filesystem::path& transfer_parent) {
  return create_under(temp_root(), transfer_parent);
}

std::filesystem::path ScratchSpace::transfer_parent() {
  return has_shared_memory() ? std::filesystem::path(kSharedMemory) : temp_root();
}

ScratchSpace ScratchSpace::create_under(const std::filesystem::path& parent,
                                        const std::filesystem::path& transfer_parent) {
  std::filesystem::path directory = make_private_directory(parent / "kforge-XXXXXX");
  std::error_code error;
  std::filesystem::path transfer;
  try {
    transfer = !transfer_parent.empty()
                   ? make_private_directory(transfer_parent / fmt::format("kforge-{}-XXXXXX", getpid()))
                   : directory / "transfer";
    std::filesystem::create_directories(transfer);
  } catch (...) {
    std::filesystem::remove_all(directory, error);
    throw;
  }
  return {std::move(directory), std::move(transfer)};
}

ScratchSpace::ScratchSpace(std::filesystem::path directory, std::filesystem::path transfer_directory)
    : directory_(std::move(directory)), transfer_directory_(std::move(transfer_directory)) {}

ScratchSpace::ScratchSpace(ScratchSpace&& other) noexcept
    : directory_(std::move(other.directory_)), transfer_directory_(std::move(other.transfer_directory_)) {
  other.directory_.clear();
  other.transfer_directory_.clear();
}

ScratchSpace::~ScratchSpace() {
  std::error_code error;
  if (!transfer_directory_.empty()) {
    std::filesystem::remove_all(transfer_directory_, error);
  }
  if (!directory_.empty()) {
    std::filesystem::remove_all(directory_, error);
  }
}

}  // namespace kforge::runner
