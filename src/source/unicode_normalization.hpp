#pragma once

#include <string>
#include <string_view>

namespace kforge::source {

// Python compares identifiers after NFKC normalisation (PEP 3131): `ｔｏｒｃｈ` is `torch`. The
// tokenizer and the rules normalise every identifier, and every string a rule reads as a name, with
// this function so that a fullwidth or otherwise compatible spelling names what Python would.
// ASCII text is returned as is (NFKC leaves it unchanged); text that is not valid UTF-8 too.
std::string nfkc(std::string_view text);

// True when `text` has a byte outside ASCII (only such text can change under NFKC).
bool has_non_ascii(std::string_view text);

}  // namespace kforge::source
