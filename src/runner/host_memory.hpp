#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

namespace kforge::runner {

// What this process may still use of the machine's memory: MemAvailable from /proc/meminfo, lowered by
// the memory limit of every cgroup (v2 `memory.max` minus `memory.current`, v1 `memory.limit_in_bytes`
// minus `memory.usage_in_bytes`) from this process's group up to the root. nullopt when neither can be
// read. The roots are parameters so tests can give a fake /proc and /sys/fs/cgroup.
std::optional<std::uint64_t> available_memory_bytes(
    const std::filesystem::path& proc_root = "/proc",
    const std::filesystem::path& cgroup_root = "/sys/fs/cgroup");

// The candidate's default resident-memory limit for `available` bytes still free: half of it (room for
// the judge, kforge and the evaluations beside it), at least 1 GiB and at most 32 GiB (a candidate that
// needs more is asked to say so with KFORGE_CANDIDATE_MEMORY_GIB). 32 GiB when nothing is known.
std::uint64_t default_memory_limit(std::optional<std::uint64_t> available);

}  // namespace kforge::runner
