#include "rules/module_table.hpp"

#include <algorithm>

namespace kforge::rules {
namespace {

std::string_view first_component(std::string_view name) { return name.substr(0, name.find('.')); }

// The root_shapes_ slot and bit of a first component (the empty one is slot 0, bit 0).
std::size_t shape_slot(std::string_view root) {
  return root.empty() ? 0 : static_cast<unsigned char>(root.front());
}
std::uint32_t shape_bit(std::string_view root) {
  return std::uint32_t{1} << std::min<std::size_t>(root.size(), 31);
}

}  // namespace

ModuleTable::ModuleTable(std::span<const std::string_view> entries) : entries_(entries) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    positions_.try_emplace(entries[i], i);  // a repeated entry keeps its first position
    const std::string_view root = first_component(entries[i]);
    roots_.insert(root);
    root_shapes_[shape_slot(root)] |= shape_bit(root);
  }
}

std::optional<std::string_view> ModuleTable::match(std::string_view origin) const {
  const std::string_view root = first_component(origin);
  if ((root_shapes_[shape_slot(root)] & shape_bit(root)) == 0 || !roots_.contains(root)) {
    return std::nullopt;
  }
  // Every prefix of `origin` that ends at a component boundary, the shortest first.
  std::optional<std::size_t> best;
  std::size_t end = root.size();
  while (true) {
    if (const auto found = positions_.find(origin.substr(0, end)); found != positions_.end()) {
      best = best ? std::min(*best, found->second) : found->second;
    }
    if (end >= origin.size()) {
      break;
    }
    const std::size_t next = origin.find('.', end + 1);
    end = next == std::string_view::npos ? origin.size() : next;
  }
  return best ? std::optional<std::string_view>(entries_[*best]) : std::nullopt;
}

}  // namespace kforge::rules
