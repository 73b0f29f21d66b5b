#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kforge::cli {

// Kernel mode's inputs taken from the kernel file's own test block: runs
// `python -m kforge.worker.kernel_capture`, which records the arguments the test block passes to
// `entry` (the call `case_index`, or the largest) and writes them as an inputs spec. Returns the spec's
// text. Throws std::runtime_error "the test block ...: REASON" when nothing was captured.
std::string capture_test_block_spec(const std::filesystem::path& kernel, const std::string& entry,
                                    std::optional<int> case_index,
                                    const std::optional<std::filesystem::path>& python, double timeout_s);

}  // namespace kforge::cli
