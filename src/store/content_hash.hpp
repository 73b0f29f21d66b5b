#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::store {

// SHA-256 of some bytes, as 64 lowercase hex digits (what `sha256sum` prints).
std::string sha256_hex(std::string_view bytes);

// HMAC-SHA-256 of `message` under `key`, as 64 lowercase hex digits.
std::string hmac_sha256_hex(std::string_view key, std::string_view message);

// SHA-256 over several files' names and contents in the given order; a missing file hashes as absent.
std::string sha256_of_files(const std::vector<std::filesystem::path>& files);

}  // namespace kforge::store
