#include "source/offset_cursor.hpp"

namespace kforge::source {

std::optional<std::size_t> OffsetCursor::offset_of(SourceLocation location) {
  if (location.line < line_ || (location.line == line_ && location.column < column_)) {
    *this = OffsetCursor(text_);  // asked backwards: start over
  }
  while (line_ < location.line) {
    const auto end = text_.find_first_of("\r\n", offset_);
    if (end == std::string_view::npos) {
      return std::nullopt;
    }
    offset_ = end + ((text_[end] == '\r' && end + 1 < text_.size() && text_[end + 1] == '\n') ? 2 : 1);
    ++line_;
    column_ = 1;
  }
  while (column_ < location.column && offset_ < text_.size()) {
    ++offset_;
    while (offset_ < text_.size() && (static_cast<unsigned char>(text_[offset_]) & 0xC0U) == 0x80U) {
      ++offset_;  // a UTF-8 continuation byte belongs to the same code point
    }
    ++column_;
  }
  return offset_;
}

}  // namespace kforge::source
