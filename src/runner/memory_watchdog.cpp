#include "runner/memory_watchdog.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "runner/byte_size.hpp"

namespace kforge::runner {
namespace {

std::uint64_t page_size() {
  const long size = sysconf(_SC_PAGESIZE);
  return size > 0 ? static_cast<std::uint64_t>(size) : 4096;
}

struct StatFields {
  pid_t group = 0;
  std::uint64_t resident_pages = 0;
};

// /proc/PID/stat: the command name in parentheses may hold spaces, so fields count from the last ')'.
std::optional<StatFields> read_stat(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::string line;
  if (!std::getline(file, line)) {
    return std::nullopt;
  }
  const auto close = line.rfind(')');
  if (close == std::string::npos) {
    return std::nullopt;
  }
  std::istringstream fields(line.substr(close + 1));
  std::string state;
  long parent = 0;
  StatFields result;
  fields >> state >> parent >> result.group;
  std::string skipped;
  for (int field = 6; field < 24 && fields >> skipped; ++field) {  // fields 6..23, up to rss (24)
  }
  fields >> result.resident_pages;
  if (!fields) {
    return std::nullopt;
  }
  return result;
}

}  // namespace

MemoryWatchdog::MemoryWatchdog(std::uint64_t limit_bytes) : limit_(limit_bytes) {}

std::uint64_t MemoryWatchdog::process_resident_bytes(pid_t pid) {
  std::ifstream file(fmt::format("/proc/{}/statm", pid));
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  if (!(file >> size >> resident)) {
    return 0;
  }
  return resident * page_size();
}

std::uint64_t MemoryWatchdog::group_resident_bytes(pid_t group) {
  std::uint64_t pages = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) == 0) {
      continue;
    }
    if (const auto stat = read_stat(entry.path() / "stat"); stat && stat->group == group) {
      pages += stat->resident_pages;
    }
  }
  return pages * page_size();
}

std::optional<std::string> MemoryWatchdog::check(pid_t group_leader) {
  const bool scan_group = ticks_++ % kGroupScanEvery == 0;
  const std::uint64_t resident =
      scan_group ? group_resident_bytes(group_leader) : process_resident_bytes(group_leader);
  if (resident <= limit_) {
    return std::nullopt;
  }
  return fmt::format(
      "memory limit exceeded: {} resident, over the limit of {} (KFORGE_CANDIDATE_MEMORY_GIB); the "
      "supervisor killed the process group",
      format_bytes(resident, 2), format_bytes(limit_, 2));
}

std::string MemoryWatchdog::describe() const {
  return fmt::format("on (resident memory of the process group, limit {}, checked every {} ms)",
                     format_bytes(limit_), kInterval.count());
}

}  // namespace kforge::runner
