#pragma once

#include <filesystem>
#include <string>

namespace kforge::runner {

// A private temporary folder and a shared-memory name prefix for one evaluation. The destructor
// removes both, including /dev/shm files a crashed worker could not unlink.
class ScratchSpace {
 public:
  static ScratchSpace create();

  ScratchSpace(const ScratchSpace&) = delete;
  ScratchSpace& operator=(const ScratchSpace&) = delete;
  ScratchSpace(ScratchSpace&& other) noexcept;
  ScratchSpace& operator=(ScratchSpace&&) = delete;
  ~ScratchSpace();

  const std::filesystem::path& directory() const { return directory_; }
  const std::string& shm_prefix() const { return shm_prefix_; }

 private:
  ScratchSpace(std::filesystem::path directory, std::string shm_prefix);
  void remove_shared_memory() const;
  std::filesystem::path directory_;
  std::string shm_prefix_;
};

}  // namespace kforge::runner
