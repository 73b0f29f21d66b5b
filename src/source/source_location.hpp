#pragma once

#include <ostream>
#include <string>

namespace kforge::source {

// A position in Python source: 1-based line, 1-based column counted in Unicode code points
// (a tab counts as one column). Universal newlines (\n, \r\n, \r) all end a line.
struct SourceLocation {
  int line = 1;
  int column = 1;

  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
  // Source order: by line, then column.
  friend bool operator<(const SourceLocation& a, const SourceLocation& b) {
    return a.line < b.line || (a.line == b.line && a.column < b.column);
  }
  friend bool operator>(const SourceLocation& a, const SourceLocation& b) { return b < a; }
  friend bool operator<=(const SourceLocation& a, const SourceLocation& b) { return !(b < a); }
  friend bool operator>=(const SourceLocation& a, const SourceLocation& b) { return !(a < b); }
};

// "line:column", the form used in every diagnostic.
inline std::string to_string(SourceLocation location) {
  return std::to_string(location.line) + ":" + std::to_string(location.column);
}

inline std::ostream& operator<<(std::ostream& out, SourceLocation location) {
  return out << to_string(location);
}

}  // namespace kforge::source
