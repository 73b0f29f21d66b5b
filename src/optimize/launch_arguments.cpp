#include "optimize/launch_arguments.hpp"

#include <algorithm>
#include <cstddef>

#include "source/offset_cursor.hpp"

namespace kforge::optimize {
namespace {

// The index of the launch's argument list `(`: the first `(` at the launch's own depth right after a
// `]` that closed there (`kernel[grid](`, `self.k[g](`, not `a[i].b(`); nullopt at the statement's end.
std::optional<std::size_t> argument_list_open(const std::vector<source::Token>& tokens, std::size_t first) {
  int depth = 0;
  bool after_subscript = false;
  for (std::size_t i = first; i < tokens.size(); ++i) {
    const auto& token = tokens[i];
    if (depth == 0 && after_subscript && token.is_op("(")) {
      return i;
    }
    after_subscript = false;
    if (source::is_opening_bracket(token)) {
      ++depth;
    } else if (source::is_closing_bracket(token)) {
      if (--depth < 0) {
        return std::nullopt;
      }
      after_subscript = depth == 0 && token.is_op("]");
    } else if (depth == 0 &&
               (token.kind == source::TokenKind::newline || token.kind == source::TokenKind::end_of_input)) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// Reads the arguments from just after `open` to the matching `)`.
class ArgumentReader {
 public:
  ArgumentReader(std::string_view source, const std::vector<source::Token>& tokens)
      : source_(source), tokens_(tokens), cursor_(source) {}

  std::optional<LaunchArguments> read(std::size_t open) {
    int depth = 1;
    bool argument_start = true;
    std::size_t last = open;  // the last token of the arguments so far
    for (std::size_t i = open + 1; i < tokens_.size(); ++i) {
      const auto& token = tokens_[i];
      if (token.kind == source::TokenKind::end_of_input) {
        return std::nullopt;
      }
      if (depth == 1 && argument_start) {
        argument_start = false;
        arguments_.double_star = arguments_.double_star || token.is_op("**");
        if (token.kind == source::TokenKind::name && i + 1 < tokens_.size() && tokens_[i + 1].is_op("=")) {
          keyword_ = token.text;
          value_first_ = i + 2;
        }
      }
      if (depth == 1 && token.is_keyword("for")) {
        return std::nullopt;  // a bare generator argument: no other argument may follow it
      }
      if (source::is_opening_bracket(token)) {
        ++depth;
      } else if (source::is_closing_bracket(token) && --depth == 0) {
        end_argument(last);
        return arguments_;
      }
      if (depth == 1 && token.is_op(",")) {
        end_argument(last);
        argument_start = true;
        continue;
      }
      last = i;
      arguments_.any = true;
      arguments_.after_last = token.end;
    }
    return std::nullopt;
  }

 private:
  void end_argument(std::size_t last) {
    if (!keyword_.empty() && value_first_ <= last) {
      const auto begin = cursor_.offset_of(tokens_[value_first_].location);
      const auto end = cursor_.offset_of(tokens_[last].end);
      if (begin && end && *end >= *begin) {
        arguments_.keywords.push_back(
            {keyword_, tokens_[value_first_].location, std::string(source_.substr(*begin, *end - *begin))});
      }
    }
    keyword_.clear();
  }

  std::string_view source_;
  const std::vector<source::Token>& tokens_;
  source::OffsetCursor cursor_;  // asked in increasing order: one pass over the launch's text
  LaunchArguments arguments_;
  std::string keyword_;
  std::size_t value_first_ = 0;
};

}  // namespace

std::optional<LaunchArguments> launch_arguments(std::string_view source,
                                                const std::vector<source::Token>& tokens,
                                                const source::Call& launch) {
  const auto first = std::lower_bound(
      tokens.begin(), tokens.end(), launch.location,
      [](const source::Token& token, source::SourceLocation location) { return token.location < location; });
  if (first == tokens.end() || first->location != launch.location) {
    return std::nullopt;
  }
  const auto open = argument_list_open(tokens, static_cast<std::size_t>(first - tokens.begin()));
  return open ? ArgumentReader(source, tokens).read(*open) : std::nullopt;
}

}  // namespace kforge::optimize
