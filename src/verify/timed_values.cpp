#include "verify/timed_values.hpp"

#include <algorithm>

namespace kforge::verify {

std::size_t timing_value_sets(std::uint64_t set_bytes) {
  if (set_bytes == 0) {
    return kMaxTimingValueSets;
  }
  const auto fitting = static_cast<std::size_t>(kTimingValueSetBytes / set_bytes);
  return std::clamp<std::size_t>(fitting, 2, kMaxTimingValueSets);
}

std::vector<int> value_set_order(std::size_t count, std::size_t sets, std::mt19937_64& random, int previous) {
  std::vector<int> order;
  order.reserve(count);
  if (sets <= 1) {
    order.assign(count, 0);
    return order;
  }
  const int choices = static_cast<int>(sets);
  int last = previous;
  for (std::size_t i = 0; i < count; ++i) {
    const bool skip = last >= 0 && last < choices;
    std::uniform_int_distribution<int> pick(0, choices - (skip ? 2 : 1));
    int value = pick(random);
    if (skip && value >= last) {
      ++value;  // every set but the last one, equally likely
    }
    order.push_back(value);
    last = value;
  }
  return order;
}

}  // namespace kforge::verify
