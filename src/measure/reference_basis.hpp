#pragma once

#include <span>
#include <string>

namespace kforge::measure {

// How far a process's own offset can move the reference's median (issue 31): ten processes timing the
// same 4 µs kernel on one H200 read medians up to 0.67 µs apart, all of it outside the kernel itself.
inline constexpr double kProcessOffsetBoundMs = 0.0005;
inline constexpr double kProcessOffsetBoundRelative = 0.02;

// Which reference samples a speedup is computed from. The reference is timed in the judge and, beside
// the candidate, in the candidate's process; the two sides compare within one process unless the
// candidate's process ran the reference slower than the judge by more than a process's offset explains
// (then its samples are not trusted: the candidate may have slowed them).
struct ReferenceBasis {
  bool same_process = false;
  double offset_ms = 0.0;  // median beside the candidate - median in the judge
  double bound_ms = 0.0;   // the largest offset still taken as a process's own
  std::string why;         // a sentence for the verdict
};

// judge_ms: the reference's samples in the judge; beside_ms: in the candidate's process (empty when it
// was not timed there). Throws std::invalid_argument when judge_ms is empty.
ReferenceBasis choose_reference_basis(std::span<const double> judge_ms, std::span<const double> beside_ms);

}  // namespace kforge::measure
