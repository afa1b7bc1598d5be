#pragma once
// What the subcommands' actions share: how they fail, how a cluster client
// leaves, and the time stamp in default run directory names.

#include <string>

namespace cerebro::cli {

// Prints "error: MESSAGE" on stderr; returns the exit code 1.
int fail(const std::string& message);

// Ends a cluster client command: its results are written and closed, and
// tearing down an actor system that has talked to a remote node can wait
// long for the peer's proxies, so the process leaves without it.
[[noreturn]] void leave_now(int rc);

// Local time as YYYYMMDD-HHMMSS (runs/<name>-<time>).
std::string timestamp();

}  // namespace cerebro::cli
