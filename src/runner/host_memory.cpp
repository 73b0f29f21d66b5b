#include "runner/host_memory.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace kforge::runner {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMinLimit = kGiB;
constexpr std::uint64_t kMaxLimit = 32 * kGiB;

std::optional<std::uint64_t> parse_number(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;  // "max" (no limit), empty or garbage
  }
  return value;
}

std::optional<std::uint64_t> read_number(const fs::path& path) {
  std::ifstream file(path);
  std::string text;
  if (!std::getline(file, text)) {
    return std::nullopt;
  }
  return parse_number(text);
}

std::optional<std::uint64_t> mem_available(const fs::path& proc_root) {
  std::ifstream file(proc_root / "meminfo");
  std::string line;
  while (std::getline(file, line)) {
    if (line.starts_with("MemAvailable:")) {
      std::istringstream fields(line.substr(13));
      std::uint64_t kib = 0;
      if (fields >> kib) {
        return kib * kKiB;
      }
    }
  }
  return std::nullopt;
}

// Headroom (limit - usage) of one cgroup folder, when it has a limit.
std::optional<std::uint64_t> headroom(const fs::path& folder, const char* limit_name,
                                      const char* usage_name) {
  const auto limit = read_number(folder / limit_name);
  if (!limit) {
    return std::nullopt;
  }
  const auto usage = read_number(folder / usage_name).value_or(0);
  return *limit > usage ? *limit - usage : 0;
}

// The smallest headroom from `folder` up to `root`.
std::optional<std::uint64_t> smallest_headroom(const fs::path& root, fs::path relative,
                                               const char* limit_name, const char* usage_name) {
  std::optional<std::uint64_t> smallest;
  while (true) {
    const auto room = headroom(root / relative, limit_name, usage_name);
    if (room && (!smallest || *room < *smallest)) {
      smallest = room;
    }
    if (relative.empty() || relative == relative.root_path() || !relative.has_parent_path() ||
        relative.parent_path() == relative) {
      break;
    }
    relative = relative.parent_path();
  }
  return smallest;
}

// The cgroup's own folder below the hierarchy root: `0::/path` (v2) or `N:memory:/path` (v1).
std::optional<std::uint64_t> cgroup_headroom(const fs::path& proc_root, const fs::path& cgroup_root) {
  std::ifstream file(proc_root / "self" / "cgroup");
  std::string line;
  std::optional<std::uint64_t> smallest;
  while (std::getline(file, line)) {
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos) {
      continue;
    }
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const fs::path path = fs::path(line.substr(second + 1)).relative_path();
    std::optional<std::uint64_t> room;
    if (controllers.empty()) {
      room = smallest_headroom(cgroup_root, path, "memory.max", "memory.current");
    } else if (controllers.find("memory") != std::string::npos) {
      room =
          smallest_headroom(cgroup_root / "memory", path, "memory.limit_in_bytes", "memory.usage_in_bytes");
    }
    if (room && (!smallest || *room < *smallest)) {
      smallest = room;
    }
  }
  return smallest;
}

}  // namespace

std::optional<std::uint64_t> available_memory_bytes(const fs::path& proc_root, const fs::path& cgroup_root) {
  const auto machine = mem_available(proc_root);
  const auto group = cgroup_headroom(proc_root, cgroup_root);
  if (machine && group) {
    return std::min(*machine, *group);
  }
  return machine ? machine : group;
}

std::uint64_t default_memory_limit(std::optional<std::uint64_t> available) {
  if (!available) {
    return kMaxLimit;
  }
  return std::clamp(*available / 2, kMinLimit, kMaxLimit);
}

}  // namespace kforge::runner
