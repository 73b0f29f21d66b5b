#include "runner/directory_activity.hpp"

#include <functional>
#include <string>

namespace kforge::runner {

std::uint64_t directory_activity(const std::filesystem::path& folder, std::size_t max_entries) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::recursive_directory_iterator entries(folder, fs::directory_options::skip_permission_denied, error);
  if (error) {
    return 0;
  }
  std::uint64_t fingerprint = 1;
  std::size_t seen = 0;
  for (auto entry = fs::begin(entries); entry != fs::end(entries) && seen < max_entries;
       entry.increment(error), ++seen) {
    if (error) {
      break;
    }
    const auto size = entry->is_regular_file(error) ? entry->file_size(error) : 0;
    const auto modified = entry->last_write_time(error).time_since_epoch().count();
    // Order-independent: a directory's listing order may change between scans.
    fingerprint += std::hash<std::string>{}(entry->path().native()) ^
                   (static_cast<std::uint64_t>(size) * 31) ^ static_cast<std::uint64_t>(modified);
  }
  return fingerprint;
}

}  // namespace kforge::runner
