#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "source/source_location.hpp"

namespace kforge::source {

// Byte offsets of 1-based lines and code-point columns in a text whose lines end at \n, \r\n or \r
// (as the tokenizer reads them). Asked in increasing order it only moves forward, so a pass over a
// file's tokens costs one pass over its text; asked backwards, it starts over.
class OffsetCursor {
 public:
  explicit OffsetCursor(std::string_view text) : text_(text) {}

  // The byte offset of `location`, or nullopt when the text has no such line.
  std::optional<std::size_t> offset_of(SourceLocation location);

 private:
  std::string_view text_;
  std::size_t offset_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace kforge::source
