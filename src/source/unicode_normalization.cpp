#include "source/unicode_normalization.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

namespace kforge::source {
namespace {

struct FreeDeleter {
  void operator()(utf8proc_uint8_t* data) const { std::free(data); }  // NOLINT(cppcoreguidelines-no-malloc)
};

}  // namespace

bool has_non_ascii(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80U; });
}

std::string nfkc(std::string_view text) {
  if (!has_non_ascii(text)) {
    return std::string(text);
  }
  std::vector<utf8proc_uint8_t> bytes(text.size());
  std::transform(text.begin(), text.end(), bytes.begin(),
                 [](char c) { return static_cast<utf8proc_uint8_t>(c); });
  utf8proc_uint8_t* raw = nullptr;
  // NFKC = compatibility decomposition followed by canonical composition, as unicodedata.normalize does.
  const auto options = static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
  const utf8proc_ssize_t length =
      utf8proc_map(bytes.data(), static_cast<utf8proc_ssize_t>(bytes.size()), &raw, options);
  const std::unique_ptr<utf8proc_uint8_t, FreeDeleter> owned(raw);
  if (length < 0 || raw == nullptr) {
    return std::string(text);  // not UTF-8: the tokenizer has already refused such input
  }
  std::string normalised(static_cast<std::size_t>(length), '\0');
  std::transform(raw, raw + length, normalised.begin(),
                 [](utf8proc_uint8_t c) { return static_cast<char>(c); });
  return normalised;
}

}  // namespace kforge::source
