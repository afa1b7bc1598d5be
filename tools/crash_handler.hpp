#pragma once
// What a crash leaves behind: the signal's name and a stack trace with source
// file and line of every frame (backward-cpp, reading the binary's DWARF
// through libdw), on stderr, so a failing agent in a test log or a user's
// terminal says where. The process then dies of the same signal.

namespace cerebro::cli {

// Installs the handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT. Call
// once, first thing in main. A test may then crash the process on purpose:
// the fault rule fatal_signal=crash_handler_installed (runtime/base/fault_injection.hpp).
void install_crash_handler();

}  // namespace cerebro::cli
