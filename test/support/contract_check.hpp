#pragma once
// Checks that a call breaks a contract of the core (runtime/base/contract.hpp):
// runs it in a forked child, which must abort and say "internal error: ..."
// with `expected` in the message. Only for single-threaded test code: a fork
// copies the calling thread alone.

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <functional>
#include <string>

#include <boost/test/unit_test.hpp>

namespace cerebro::testing {

// What the child printed on stderr and whether it aborted.
struct ContractOutcome {
  bool aborted = false;
  std::string message;
};

inline ContractOutcome run_expecting_abort(const std::function<void()>& call) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {};
  std::fflush(nullptr);
  pid_t child = fork();
  if (child == 0) {
    // The child must die of the abort, not be caught by the test framework's
    // own signal handler (which would go on running the tests in the child).
    std::signal(SIGABRT, SIG_DFL);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    try {
      call();
    } catch (...) {
      _exit(2);  // an exception is not a contract violation
    }
    _exit(0);  // the call returned: no contract broke
  }
  close(pipe_fds[1]);
  ContractOutcome outcome;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) outcome.message.append(buffer, size_t(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  outcome.aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  return outcome;
}

}  // namespace cerebro::testing

// The call must abort with a contract violation whose message contains `expected`.
#define CEREBRO_CHECK_CONTRACT(call, expected)                                                           \
  do {                                                                                                   \
    auto outcome_ = ::cerebro::testing::run_expecting_abort([&] { call; });                              \
    BOOST_CHECK_MESSAGE(outcome_.aborted, "expected a contract violation: " #call);                      \
    BOOST_CHECK_MESSAGE(outcome_.message.find("internal error: ") != std::string::npos &&                \
                            outcome_.message.find(expected) != std::string::npos,                        \
                        "contract message \"" << outcome_.message << "\" lacks \"" << expected << "\""); \
  } while (0)
