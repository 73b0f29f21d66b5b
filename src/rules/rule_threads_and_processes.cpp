#include "rules/rule_threads_and_processes.hpp"

#include <array>
#include <string>

#include "rules/name_resolution.hpp"
#include "rules/rule_support.hpp"

namespace kforge::rules {
namespace {

// Modules that exist to run threads, processes or signal handlers, or that start processes as a side
// job (pydoc's pagers and webbrowser run shell commands): their import is reported.
constexpr auto kThreadsAndProcessesModules =
    std::to_array<std::string_view>({"threading", "_thread", "multiprocessing", "_multiprocessing",
                                     "concurrent", "subprocess", "_posixsubprocess", "signal", "asyncio",
                                     "pty", "sched", "torch.multiprocessing", "pydoc", "webbrowser"});

// Process primitives of os (and posix, which os wraps): reported at each use.
constexpr auto kThreadsAndProcessesMembers = std::to_array<std::string_view>({"os.fork",
                                                                              "os.forkpty",
                                                                              "os.system",
                                                                              "os.popen",
                                                                              "os.execl",
                                                                              "os.execle",
                                                                              "os.execlp",
                                                                              "os.execlpe",
                                                                              "os.execv",
                                                                              "os.execve",
                                                                              "os.execvp",
                                                                              "os.execvpe",
                                                                              "os.spawnl",
                                                                              "os.spawnle",
                                                                              "os.spawnlp",
                                                                              "os.spawnlpe",
                                                                              "os.spawnv",
                                                                              "os.spawnve",
                                                                              "os.spawnvp",
                                                                              "os.spawnvpe",
                                                                              "os.posix_spawn",
                                                                              "os.posix_spawnp",
                                                                              "os.kill",
                                                                              "os.killpg",
                                                                              "os.register_at_fork",
                                                                              "os.pidfd_open",
                                                                              "os.wait",
                                                                              "os.waitpid",
                                                                              "os.wait3",
                                                                              "os.wait4",
                                                                              "posix.fork",
                                                                              "posix.forkpty",
                                                                              "posix.system",
                                                                              "posix.execv",
                                                                              "posix.execve",
                                                                              "posix.posix_spawn",
                                                                              "posix.posix_spawnp",
                                                                              "posix.kill",
                                                                              "posix.killpg"});

// The tables hashed once, on first use.
const ForbiddenApi& threads_and_processes_api() {
  static const ForbiddenApi api(kThreadsAndProcessesModules, kThreadsAndProcessesMembers);
  return api;
}

constexpr std::string_view kThreadsAndProcessesWhy =
    ": threads, processes and signal handlers run work outside the measured forward call (or after it "
    "returns), where timing does not see it and where it can race the output comparison; compute "
    "synchronously in forward with Triton kernels";

}  // namespace

std::string_view ThreadsAndProcessesRule::summary() const {
  return "no threads, processes or signals (threading, multiprocessing, subprocess, os.fork/system...)";
}

void ThreadsAndProcessesRule::check(const AnalysisContext& context, std::vector<Finding>& findings) const {
  const ResolverHandle resolver(context);
  const NameResolver& names = resolver.get();
  const Severity severity = severity_for(context.profile);
  FindingSink sink(kId, findings);
  scan_forbidden_api(
      context, names, threads_and_processes_api(),
      [&](const ForbiddenImport& import) {
        sink.add(severity, import_subject(import) + std::string(kThreadsAndProcessesWhy),
                 import.statement->location);
      },
      [&](const source::Expr& use, const Resolved& resolved) {
        sink.add(severity,
                 describe(use, resolved.origin) + " starts or controls another thread or process" +
                     std::string(kThreadsAndProcessesWhy),
                 use.location);
      });
}

}  // namespace kforge::rules
