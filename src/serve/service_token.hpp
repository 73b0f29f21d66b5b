#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kforge::serve {

// The bearer token every request but GET /v1/health must carry (docs/api.md, "Token"). Anyone who
// holds it can do everything the API offers, including running their own problem code in the sandbox.

// The token in `file`: its first line with the whitespace around it trimmed (a CRLF line end, a
// trailing space). Throws std::runtime_error, naming the file, when it cannot be read, when the token
// is empty or when it holds whitespace or control characters inside.
std::string read_token_file(const std::filesystem::path& file);

// A new token (32 random bytes from the kernel, as 64 hex digits) written to `file` with mode 0600,
// replacing what was there atomically; its folder is created (mode 0700) when missing. Throws
// std::runtime_error naming the file when it cannot.
std::string write_new_token(const std::filesystem::path& file);

// True when the Authorization header's value is "Bearer <token>": the scheme in any case (RFC 7235),
// one or more spaces, then exactly the token, compared in constant time.
bool bearer_matches(std::string_view authorization, std::string_view token);

}  // namespace kforge::serve
