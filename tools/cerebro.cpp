// cerebro: the command line. Each subcommand (run, prepare, show, bench,
// coordinator, agent, status, attach, simulate, repl) is a file in
// tools/commands/ that registers itself (tools/command_registry.hpp); main
// builds the app from the registry, parses, and runs the chosen one.
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <exception>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"

using namespace cerebro;

namespace {

// A crash names its signal and leaves a backtrace on stderr (so a failing
// agent in a test log or a user's terminal says where), then dies of the same
// signal. Only async-signal-safe calls.
void report_fatal_signal(int sig) {
  const char* name = strsignal(sig);
  (void)!write(STDERR_FILENO, "cerebro: fatal signal: ", 23);
  (void)!write(STDERR_FILENO, name, strlen(name));
  (void)!write(STDERR_FILENO, "\n", 1);
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_crash_reporter() {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc now: not safe inside the handler
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, report_fatal_signal);
}

}  // namespace

int main(int argc, char** argv) {
  install_crash_reporter();
  CLI::App app{"cerebro: deep-learning model selection with Model Hopper Parallelism"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, cli::CommandAction>> commands;
  for (const auto& command : cli::registered_commands()) {
    auto* subcommand = app.add_subcommand(command.name, command.description);
    commands.emplace_back(subcommand, command.setup(*subcommand));
  }

  CLI11_PARSE(app, argc, argv);

  try {
    for (auto& [subcommand, action] : commands)
      if (subcommand->parsed()) return action();
  } catch (const std::exception& e) {
    return cli::fail(e.what());
  }
  return 0;
}
