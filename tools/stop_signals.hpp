#pragma once
// How the long-running node commands (coordinator, agent) wait for SIGINT or
// SIGTERM.

#include <pthread.h>
#include <signal.h>

namespace cerebro::cli {

inline sigset_t stop_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Signals go to the waiting main thread, not to CAF's threads: block them
// before the actor system starts its threads.
inline void block_stop_signals() {
  sigset_t set = stop_signal_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// Blocks until SIGINT or SIGTERM.
inline void wait_for_stop_signal() {
  sigset_t set = stop_signal_set();
  int sig = 0;
  sigwait(&set, &sig);
}

}  // namespace cerebro::cli
