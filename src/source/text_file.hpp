#pragma once

#include <filesystem>
#include <string>

namespace kforge::source {

// The whole file as bytes. Throws std::runtime_error "cannot read PATH: REASON".
std::string read_text_file(const std::filesystem::path& path);

}  // namespace kforge::source
