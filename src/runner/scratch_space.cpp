#include "runner/scratch_space.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "runner/cleanup_registry.hpp"
#include "runner/stale_scratch.hpp"

namespace kforge::runner {
namespace {

// mkdtemp: a new folder only this user can enter, with a random suffix; recorded for an interruption.
std::filesystem::path make_private_directory(const std::filesystem::path& pattern) {
  std::string text = pattern.string();
  std::vector<char> buffer(text.begin(), text.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    throw std::runtime_error(
        fmt::format("cannot create a temporary folder {}: {} (set TMPDIR)", text, std::strerror(errno)));
  }
  std::filesystem::path folder(buffer.data());
  CleanupRegistry::instance().add_folder(folder);
  return folder;
}

void remove_folder(const std::filesystem::path& folder) {
  std::error_code error;
  std::filesystem::remove_all(folder, error);
  CleanupRegistry::instance().forget_folder(folder);
}

}  // namespace

ScratchSpace ScratchSpace::create() {
  const auto parents = scratch_parents();
  return create_under(parents.front(), parents.size() > 1 ? parents.back() : std::filesystem::path());
}

ScratchSpace ScratchSpace::create_with_transfer_under(const std::filesystem::path& transfer_parent) {
  return create_under(scratch_parents().front(), transfer_parent);
}

std::filesystem::path ScratchSpace::transfer_parent() {
  return scratch_parents().back();  // /dev/shm where there is one, else the temporary folder
}

// Both names carry kforge's pid (scratch_folder_pattern), so a later kforge can sweep what a killed one
// left behind.
ScratchSpace ScratchSpace::create_under(const std::filesystem::path& parent,
                                        const std::filesystem::path& transfer_parent) {
  std::filesystem::path directory = make_private_directory(parent / scratch_folder_pattern());
  std::filesystem::path transfer;
  try {
    transfer = !transfer_parent.empty() ? make_private_directory(transfer_parent / scratch_folder_pattern())
                                        : directory / "transfer";
    std::filesystem::create_directories(transfer);
  } catch (...) {
    remove_folder(directory);
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
  if (!transfer_directory_.empty()) {
    remove_folder(transfer_directory_);
  }
  if (!directory_.empty()) {
    remove_folder(directory_);
  }
}

}  // namespace kforge::runner
