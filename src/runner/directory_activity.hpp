#pragma once

#include <cstdint>
#include <filesystem>

namespace kforge::runner {

// A value that changes whenever a file is added to, grown in or rewritten beneath `folder` (entries,
// bytes and the newest modification time folded together); 0 for a missing folder. A call's deadline
// moves on while it changes: Triton writes each stage of a kernel it compiles into the worker's cache
// (CallLimit::progress). Scans at most `max_entries` entries, so a worker cannot make it slow.
std::uint64_t directory_activity(const std::filesystem::path& folder, std::size_t max_entries = 4096);

}  // namespace kforge::runner
