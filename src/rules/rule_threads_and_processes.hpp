#pragma once

#include <string_view>
#include <vector>

#include "rules/rule.hpp"

namespace kforge::rules {

// Threads, processes and signals: threading, multiprocessing, concurrent.futures, subprocess,
// signal, asyncio, pty, sched, torch.multiprocessing and os.fork/system/popen/exec*/spawn*/kill.
class ThreadsAndProcessesRule final : public Rule {
 public:
  static constexpr std::string_view kId = "threads-and-processes";

  std::string_view id() const override { return kId; }
  Severity severity() const override { return Severity::reject; }
  std::string_view summary() const override;
  void check(const AnalysisContext& context, std::vector<Finding>& findings) const override;
};

}  // namespace kforge::rules
