#include "tools/crash_handler.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#define BACKWARD_HAS_DW 1
#include <backward.hpp>

#include "runtime/base/fault_injection.hpp"

namespace cerebro::cli {

namespace {

void write_text(const char* text) { (void)!write(STDERR_FILENO, text, std::strlen(text)); }

// Names the signal, prints the trace, then lets the signal kill the process
// (SA_RESETHAND restored the default action). Resolving file and line is not
// async-signal-safe: a crashing process takes that risk for the one report.
void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  write_text("cerebro: fatal signal: ");
  write_text(strsignal(sig));
  write_text("\n");
  backward::SignalHandling::handleSignal(sig, info, context);
  raise(sig);
  _exit(128 + sig);  // not reached: the default action ends the process
}

}  // namespace

void install_crash_handler() {
  // Its own stack, so a stack overflow (SIGSEGV on a full stack) is reported too.
  static constexpr size_t kStackBytes = 1 << 20;
  static char* stack = static_cast<char*>(std::malloc(kStackBytes));
  if (stack) {
    stack_t ss{};
    ss.ss_sp = stack;
    ss.ss_size = kStackBytes;
    sigaltstack(&ss, nullptr);
  }
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    struct sigaction action {};
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESETHAND;
    sigfillset(&action.sa_mask);
    sigdelset(&action.sa_mask, sig);
    action.sa_sigaction = &on_fatal_signal;
    sigaction(sig, &action, nullptr);
  }
  if (auto thrown = FaultInjection::instance().crash_point("crash_handler_installed"); !thrown.ok())
    throw Error(thrown);
}

}  // namespace cerebro::cli
