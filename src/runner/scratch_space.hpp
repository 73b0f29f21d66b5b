#pragma once

#include <filesystem>
#include <string>

namespace kforge::runner {

// A private temporary folder and a transfer folder (on /dev/shm, a tmpfs, when there is one) for the
// CPU tensors of one evaluation. The destructor removes both, including buffers a crashed worker left.
class ScratchSpace {
 public:
  static ScratchSpace create();
  // The same two folders inside given parents (a candidate zygote's, whose sandbox opens only those).
  static ScratchSpace create_under(const std::filesystem::path& parent,
                                   const std::filesystem::path& transfer_parent);
  // A private folder in the temporary folder and the transfer folder under `transfer_parent` (a problem
  // session's transfer folder: its judge, sandboxed, may write only there).
  static ScratchSpace create_with_transfer_under(const std::filesystem::path& transfer_parent);
  // Where transfer folders are made: /dev/shm when there is one, else the temporary folder. Whatever
  // opens every evaluation's transfer folder (the candidate zygote) is given this.
  static std::filesystem::path transfer_parent();

  ScratchSpace(const ScratchSpace&) = delete;
  ScratchSpace& operator=(const ScratchSpace&) = delete;
  ScratchSpace(ScratchSpace&& other) noexcept;
  ScratchSpace& operator=(ScratchSpace&&) = delete;
  ~ScratchSpace();

  const std::filesystem::path& directory() const { return directory_; }
  // Only this evaluation's judge calls and candidate open it (the candidate's sandbox allows no other).
  const std::filesystem::path& transfer_directory() const { return transfer_directory_; }

 private:
  ScratchSpace(std::filesystem::path directory, std::filesystem::path transfer_directory);
  std::filesystem::path directory_;
  std::filesystem::path transfer_directory_;
};

}  // namespace kforge::runner
