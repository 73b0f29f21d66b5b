#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <vector>

namespace kforge::runner {

// The folders scratch spaces are made in: the temporary folder ($TMPDIR, else /tmp) and /dev/shm.
std::vector<std::filesystem::path> scratch_parents();

// The name of a scratch folder of this process: "kforge-<pid>-" followed by mkdtemp's XXXXXX, so that a
// later kforge can tell whose it is.
std::string scratch_folder_pattern();

// Removes the scratch folders (kforge-<pid>-*) in `parents` that this user owns, whose kforge process is
// gone (killed with SIGKILL, or crashed: no process has its pid), and that nothing has touched for
// `min_age` (a guard for a kforge in another PID namespace sharing the folder). Returns how many were
// removed.
std::size_t sweep_stale_scratch(const std::vector<std::filesystem::path>& parents,
                                std::chrono::seconds min_age = std::chrono::seconds(60));

}  // namespace kforge::runner
