#pragma once
// The dashboard and HTTP API of a command's own cluster: `cerebro coordinator
// --http` (the cluster's token, the coordinator's certificate) and the
// embedded `cerebro run --ui` / `cerebro repl --ui` (a link with a random
// one-time login token, as Jupyter prints one, and the API token beside it;
// 127.0.0.1 unless a host is given).

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "actors/http/http_server.hpp"

namespace cerebro::cli {

// "[HOST:]PORT" -> host (default 127.0.0.1) and port; throws Error naming the text.
struct UiAddress {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
};
UiAddress parse_ui_address(const std::string& text);

// --ui [HOST:]PORT on run and repl.
void add_ui_option(CLI::App& command, std::string& ui);

// Starts the HTTP server of an embedded cluster with fresh random tokens and
// prints its link (with the one-time token) and its API token on stderr; nullptr and an error printed when
// it cannot listen. Submissions' files go under `state_dir`/uploads; `read_only` refuses every change.
std::unique_ptr<HttpServer> start_embedded_ui(caf::actor_system& system, const coordinator_actor& gateway,
                                              const std::string& gateway_token, const std::string& ui,
                                              const std::string& state_dir, bool read_only = false);

}  // namespace cerebro::cli
