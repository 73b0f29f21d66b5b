#include "runner/fatal_signal_report.hpp"

#include <execinfo.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstring>

namespace kforge::runner {

namespace {

constexpr std::array kFatalSignals = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void write_text(const char* text) {
  // Nothing to do if stderr is gone: the signal's own exit status still tells.
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, text, std::strlen(text));
}

// Only async-signal-safe calls: write(2), backtrace_symbols_fd, raise.
extern "C" void report_fatal_signal(int signal_number) {
  write_text("kforge: internal error: ");
  const char* name = sigabbrev_np(signal_number);
  write_text(name != nullptr ? name : "fatal signal");
  write_text(
      " (please report it with `kforge --version` and these addresses: addr2line -e kforge -f -C ...)\n");
  std::array<void*, 64> frames{};
  const int count = backtrace(frames.data(), static_cast<int>(frames.size()));
  backtrace_symbols_fd(frames.data(), count, STDERR_FILENO);
  raise(signal_number);  // SA_RESETHAND restored the default action on entry: this ends the process
}

}  // namespace

void install_fatal_signal_report() {
  std::array<void*, 1> warm{};
  backtrace(warm.data(), 1);  // loads libgcc's unwinder now: it allocates, which a handler must not
  struct sigaction action {};
  action.sa_handler = report_fatal_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = static_cast<int>(SA_RESETHAND | SA_NODEFER);  // a fault in the report ends it at once
  for (const int signal_number : kFatalSignals) {
    sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace kforge::runner
