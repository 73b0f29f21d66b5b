#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kforge::cli {

// What a test block capture found: the inputs spec (JSON text) and the wrapper it was taken from.
struct CapturedInputs {
  std::string spec;
  std::string entry;
};

// Kernel mode's inputs taken from the kernel file's own test block: runs
// `python -m kforge.worker.kernel_capture`, which records the arguments the test block passes to
// `entry` (the call `case_index`, or the largest) and writes them as an inputs spec. An empty `entry` is
// found: the first function of the file (not a Triton kernel) that the test block calls by name.
// Throws std::runtime_error "the test block ...: REASON" when nothing was captured.
CapturedInputs capture_test_block_spec(const std::filesystem::path& kernel, const std::string& entry,
                                       std::optional<int> case_index,
                                       const std::optional<std::filesystem::path>& python, double timeout_s);

// The error of a capture that failed because the test block wants a GPU this machine does not have
// (CUDA tensors on a machine without one): the reason, and what to give instead; nullopt otherwise.
std::optional<std::string> capture_needs_a_gpu(const std::string& error, const std::filesystem::path& kernel);

}  // namespace kforge::cli
