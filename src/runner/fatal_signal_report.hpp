#pragma once

namespace kforge::runner {

// On a fault of kforge's own (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT), writes "kforge: internal
// error: <signal> ..." and the faulting thread's return addresses to stderr, then dies of the same
// signal (the exit status a supervisor sees is unchanged). The addresses resolve with
// `addr2line -e kforge -f -C ADDR...` on the same build (`kforge --version` names its commit): a crash
// in CI or a user's service then says where it happened. Installed once, at the start of main.
void install_fatal_signal_report();

}  // namespace kforge::runner
