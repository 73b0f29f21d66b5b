#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kforge::source {

// The whole file as bytes. Throws std::runtime_error "cannot read PATH: REASON".
std::string read_text_file(const std::filesystem::path& path);

// Writes `text` as the whole file. Throws std::runtime_error "cannot write PATH: REASON".
void write_text_file(const std::filesystem::path& path, std::string_view text);

}  // namespace kforge::source
