#include "measure/reference_basis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "measure/sample_statistics.hpp"

namespace kforge::measure {

ReferenceBasis choose_reference_basis(std::span<const double> judge_ms, std::span<const double> beside_ms) {
  if (judge_ms.empty()) {
    throw std::invalid_argument("choose_reference_basis: no reference samples from the judge");
  }
  ReferenceBasis basis;
  const double judge = summarize(judge_ms).median;
  basis.bound_ms = std::max(kProcessOffsetBoundMs, kProcessOffsetBoundRelative * judge);
  if (beside_ms.empty()) {
    basis.why = "the reference was timed only in the judge: the speedup compares two processes";
    return basis;
  }
  const double beside = summarize(beside_ms).median;
  basis.offset_ms = beside - judge;
  basis.same_process = basis.offset_ms <= basis.bound_ms;
  basis.why =
      basis.same_process
          ? fmt::format(
                "both sides timed in the candidate's process (the reference there {:+.4g} ms from the "
                "judge's, within a process's offset of {:.4g} ms)",
                basis.offset_ms, basis.bound_ms)
          : fmt::format(
                "the candidate's process ran the reference {:.4g} ms slower than the judge, more than "
                "a process's offset of {:.4g} ms: the judge's reference is the basis",
                basis.offset_ms, basis.bound_ms);
  return basis;
}

}  // namespace kforge::measure
