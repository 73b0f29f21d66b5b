#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "problem/kernel_problem.hpp"

namespace kforge::cli {

// What a test block capture found: the inputs spec (JSON text), the wrapper it was taken from and what
// the recorded call wrote.
struct CapturedInputs {
  std::string spec;
  std::string entry;
  problem::ObservedCall call;
  std::vector<std::string> called_tests;  // test functions the block never called: kforge called them
};

// A capture's JSON answer ({"spec", "entry", "writes", "returns_none"}) as CapturedInputs; `entry` when
// the answer names none. Throws std::runtime_error when it holds no spec.
CapturedInputs captured_inputs(const nlohmann::json& answer, const std::string& entry);

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
// What the generated kernel-mode `problem`'s wrapper `entry` writes, from one call on the problem's own
// get_inputs() (the seed, the small sizes and the overrides the judge will use), run by
// `python -m kforge.worker.kernel_capture --probe`. Throws std::runtime_error "the wrapper probe ...".
problem::ObservedCall probe_wrapper_writes(const std::filesystem::path& problem, const std::string& entry,
                                           bool small, const std::map<std::string, std::string>& sizes,
                                           std::uint64_t seed,
                                           const std::optional<std::filesystem::path>& python,
                                           double timeout_s);

}  // namespace kforge::cli
