#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "data/sft_collection.hpp"

namespace kforge::data {

// What to compile and where: a problem, the device (the teacher needs a GPU unless it rewrites a saved
// capture), the sizes the verifier will use (Inductor specialises its kernels to them), and the folder
// of captures (read from when it holds the problem's, written to otherwise; empty: none).
struct InductorTeacherSettings {
  std::string device = "auto";
  bool small = false;
  std::map<std::string, std::string> sizes;
  std::filesystem::path captures;
  std::optional<std::filesystem::path> python;
  double timeout_s = 900.0;  // torch.compile with matmul autotuning can take minutes
};

// The teacher's answer for one problem: a standalone candidate, or the stage and reason it has none.
struct InductorCandidate {
  std::string candidate;
  std::string stage;  // when there is no candidate: capture, standalone, environment, timeout, internal...
  std::string error;
};

// Runs `python -m kforge.worker.inductor_teacher` for one problem (its capture file in
// settings.captures is <name>.capture.json, or .small.capture.json for the small sizes). Never throws:
// a worker that cannot start, hangs or dies gives an error answer.
InductorCandidate inductor_candidate(const std::filesystem::path& problem, const std::string& name,
                                     const InductorTeacherSettings& settings);

// Why the inductor teacher cannot work here, or "": on the CPU (`device` as resolved) torch.compile
// writes C++, not Triton, so it needs a GPU or a folder of captures made on one (`captures`).
std::string inductor_teacher_problem(const std::string& device, const std::filesystem::path& captures);

// The inductor teacher for collect_sft: one deterministic sample per problem, its text the candidate
// in a ```python block (the SFT answer), or the reason there is none as the sample's error.
Teacher inductor_teacher(const InductorTeacherSettings& settings);

}  // namespace kforge::data
