#include <gtest/gtest.h>

#include <cstddef>
#include <optional>
#include <string_view>

#include "source/offset_cursor.hpp"

namespace kforge::source {
namespace {

// Lines end at \n, \r\n and a lone \r, as the tokenizer reads them; columns count code points.
TEST(OffsetCursor, CountsLinesAsTheTokenizerDoesAndColumnsInCodePoints) {
  constexpr std::string_view text = "ab\r\ncaf\xC3\xA9 x\rq\nend";
  OffsetCursor cursor(text);
  EXPECT_EQ(cursor.offset_of({1, 2}), std::optional<std::size_t>(1));
  EXPECT_EQ(cursor.offset_of({2, 1}), std::optional<std::size_t>(4));
  EXPECT_EQ(cursor.offset_of({2, 6}), std::optional<std::size_t>(10)) << "é is one column, two bytes";
  EXPECT_EQ(cursor.offset_of({3, 1}), std::optional<std::size_t>(12));
  EXPECT_EQ(cursor.offset_of({4, 3}), std::optional<std::size_t>(16));
  EXPECT_EQ(cursor.offset_of({1, 1}), std::optional<std::size_t>(0)) << "asked backwards, it starts over";
  EXPECT_EQ(cursor.offset_of({2, 1}), std::optional<std::size_t>(4));
  EXPECT_EQ(cursor.offset_of({5, 1}), std::nullopt) << "no fifth line";
}

}  // namespace
}  // namespace kforge::source
