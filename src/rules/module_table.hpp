#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

// A table of dotted module or member names ("os", "torch.cuda.Stream") that answers which entry an
// origin lies in (see in_module) with a few hash lookups instead of a pass over the table: the
// forbidden-API rules ask it for every reference of every candidate.
namespace kforge::rules {

class ModuleTable {
 public:
  // `entries` must outlive the table (the rules pass static arrays).
  explicit ModuleTable(std::span<const std::string_view> entries);

  // The first entry, in table order, that `origin` is or lies inside
  // ("torch.cuda.Stream.wait" lies in "torch.cuda" but not in "torch.cu"), if any.
  std::optional<std::string_view> match(std::string_view origin) const;
  std::span<const std::string_view> entries() const { return entries_; }

 private:
  std::span<const std::string_view> entries_;
  std::unordered_map<std::string_view, std::size_t> positions_;  // entry -> its index in entries_
  std::unordered_set<std::string_view> roots_;  // first components, which reject most origins
  // Per first character, a bit per length (31 for longer ones) of the first components: rejects
  // most origins without hashing them.
  std::array<std::uint32_t, 256> root_shapes_{};
};

}  // namespace kforge::rules
