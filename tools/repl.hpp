#pragma once
// `cerebro repl`: steer experiments by hand. Without --cluster it starts an
// embedded cluster (a coordinator and one local agent) in this process; with
// it, it attaches to a coordinator. Either way every command goes through
// the coordinator's gateway with cerebro::Client (actors/client.hpp).

#include <string>

#include "actors/system_config.hpp"

namespace cerebro {

struct ReplOptions {
  std::string cluster;     // host:port; empty: an embedded cluster
  std::string token_file;  // with --cluster
  std::string state_dir;   // embedded: where experiments and the shard cache go
  int workers = 0;         // embedded: 0 = one per core
  double connect_timeout_s = 15;
  tls_options tls;
};

// Reads commands from a terminal (prompt, editing, history, completion) or,
// when stdin is not a terminal, line by line without prompts. Ends the
// process (std::_Exit: an actor system teardown would wait for the embedded
// cluster's experiments) with 0, or 1 when stdin was not a terminal and a
// command failed; 1 also when the session cannot start.
[[noreturn]] void repl_main(const ReplOptions& options);

}  // namespace cerebro
