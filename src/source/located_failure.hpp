#pragma once

#include <exception>
#include <string>
#include <utility>

#include "source/source_location.hpp"

namespace kforge::source::detail {

// Internal error carrier of the tokenizer and the parser: thrown where reading fails, turned into a
// structured error at the public entry point.
class LocatedFailure : public std::exception {
 public:
  LocatedFailure(std::string message, SourceLocation location)
      : message_(std::move(message)), location_(location) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& message() const { return message_; }
  SourceLocation location() const { return location_; }

 private:
  std::string message_;
  SourceLocation location_;
};

// Increments a nesting counter for the lifetime of a scope and throws Failure past the limit, so
// recursion depth stays bounded whatever the input.
template <class Failure>
class ScopedNesting {
 public:
  ScopedNesting(int& depth, int limit, const char* message, SourceLocation location) : depth_(depth) {
    if (++depth_ > limit) {
      --depth_;
      throw Failure(message, location);
    }
  }
  ScopedNesting(const ScopedNesting&) = delete;
  ScopedNesting(ScopedNesting&&) = delete;
  ScopedNesting& operator=(const ScopedNesting&) = delete;
  ScopedNesting& operator=(ScopedNesting&&) = delete;
  ~ScopedNesting() { --depth_; }

 private:
  int& depth_;
};

}  // namespace kforge::source::detail
