#pragma once
// What the subcommands' actions share: how they fail, how a cluster client
// leaves, and the time stamp in default run directory names.

#include <string>

#include "runtime/base/status.hpp"

namespace cerebro::cli {

// Prints "error: MESSAGE" on stderr; returns the exit code 1.
int fail(const std::string& message);

// Ends a cluster client command: its results are written and closed, and
// tearing down an actor system that has talked to a remote node can wait
// long for the peer's proxies, so the process leaves without it.
[[noreturn]] void leave_now(int rc);

// Local time as YYYYMMDD-HHMMSS (runs/<name>-<time>): runtime/base/time_format.
std::string timestamp();

// The run directory (one with a state/ store) that `dir` names: `dir` itself, or the one experiment under
// it that a run through a cluster or with --ui writes (DIR/experiments/<id>/, the directory `run` prints).
// An error names `dir` and, when it holds several experiments, each of them.
Result<std::string> resolve_run_dir(const std::string& dir);

}  // namespace cerebro::cli
