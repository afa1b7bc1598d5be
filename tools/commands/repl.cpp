// `cerebro repl`: steer experiments by hand. Without --cluster it starts an
// embedded cluster (a coordinator and one local agent) in this process; with
// it, it attaches to a coordinator. Either way every command goes through
// the coordinator's gateway with cerebro::Client (actors/client.hpp).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "actors/client.hpp"
#include "actors/embedded_cluster.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "tools/cluster_client.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"
#include "tools/line_editor.hpp"
#include "tools/repl_commands.hpp"
#include "tools/shared_options.hpp"
#include "tools/ui_server.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

struct ReplOptions {
  std::string cluster;     // host:port; empty: an embedded cluster
  std::string token_file;  // with --cluster
  std::string state_dir;   // embedded: where experiments and the shard cache go
  int workers = 0;         // embedded: 0 = one per core
  double connect_timeout_s = 15;
  tls_options tls;
  std::string ui;  // --ui [HOST:]PORT: the embedded cluster's dashboard
};

constexpr double kReconnectBudgetS = 60;

// The REPL's link to a gateway: an embedded cluster's or a remote one's.
struct Session {
  explicit Session(const ReplOptions& o)
      : config(o.cluster.empty() ? system_role::embedded : system_role::client, o.tls), system(config) {}
  cerebro_system_config config;
  caf::actor_system system;
  std::optional<EmbeddedCluster> embedded;
  std::unique_ptr<Client> client;
  std::unique_ptr<HttpServer> ui;
};

Status open_session(Session& session, const ReplOptions& o) {
  if (o.cluster.empty()) {
    auto cluster = EmbeddedCluster::start(session.system, EmbeddedClusterOptions{o.state_dir, o.workers});
    if (!cluster.ok()) return cluster.status();
    session.embedded = std::move(cluster).value();
    session.client = std::make_unique<Client>(session.system, session.embedded->gateway(), session.embedded->token());
    if (!o.ui.empty()) {
      // The same gateway: what the dashboard steers, the REPL sees, and the other way round.
      session.ui = cli::start_embedded_ui(session.system, session.embedded->gateway(), session.embedded->token(), o.ui,
                                          o.state_dir);
      if (!session.ui) return Status::io_error("the dashboard could not start");
    }
    return Status::ok_status();
  }
  if (!o.ui.empty())
    return Status::invalid_argument("--ui serves an embedded cluster; a coordinator serves its own (--http)");
  if (o.token_file.empty()) return Status::invalid_argument("--cluster needs --token-file");
  auto token = read_token_file(o.token_file);
  if (!token.ok()) return token.status();
  if (auto p = o.tls.problem(); !p.empty()) return Status::invalid_argument(p);
  auto at = parse_endpoint(o.cluster);
  auto client =
      Client::connect(session.system, GatewayAddress{at.host, at.port, o.tls.enabled()}, *token, o.connect_timeout_s);
  if (!client.ok()) return client.status();
  session.client = std::move(client).value();
  // A coordinator that died may leave requests unanswered rather than
  // refused: notice it sooner than the default.
  session.client->request_timeout_s = 10;
  return Status::ok_status();
}

// After a command lost the coordinator: says so and attaches again. The
// experiments run on the coordinator; nothing of them depends on this REPL.
bool reconnect(Client& client) {
  fmt::print(stderr, "lost the coordinator at {}; reconnecting (up to {:.0f} s)\n", client.where(), kReconnectBudgetS);
  auto again = client.reconnect(kReconnectBudgetS);
  if (!again.ok()) {
    fmt::print(stderr, "error: {}\n", again.message());
    return false;
  }
  fmt::print(stderr, "reconnected to the coordinator at {}\n", client.where());
  return true;
}

// Runs one line; on a lost coordinator reconnects and runs a read-only
// command once more (a changing one might have been applied: not repeated).
bool run_line(cli::ReplCommands& commands, Client& client, const std::vector<std::string>& words) {
  bool ok = commands.execute(words);
  if (ok || !client.lost_connection()) return ok;
  if (!reconnect(client)) return false;
  const auto* command = cli::find_command(words[0]);
  if (command && command->read_only) return commands.execute(words);
  fmt::print(stderr, "the coordinator may or may not have applied \"{}\": check with status or show\n", words[0]);
  return false;
}

// Reads commands from a terminal (prompt, editing, history, completion) or,
// when stdin is not a terminal, line by line without prompts. Ends the
// process (std::_Exit: an actor system teardown would wait for the embedded
// cluster's experiments) with 0, or 1 when stdin was not a terminal and a
// command failed; 1 also when the session cannot start.
[[noreturn]] void repl_main(const ReplOptions& o) {
  const bool terminal = isatty(STDIN_FILENO) != 0;
  // The embedded coordinator's and agent's log lines (from their start on):
  // kept for `log`; on a terminal printed above the prompt (never onto it),
  // in a script on standard error as they come.
  LogBook log_book;
  if (o.cluster.empty())
    set_log_sink([&log_book, terminal](const std::string& line) {
      log_book.add(line);
      if (!terminal) std::fprintf(stderr, "%s\n", line.c_str());
    });
  Session session(o);
  if (auto opened = open_session(session, o); !opened.ok()) {
    fmt::print(stderr, "error: {}\n", opened.message());
    std::fflush(stderr);
    std::_Exit(1);
  }
  auto& client = *session.client;
  cli::ReplCommands commands(client, terminal);
  if (session.embedded) commands.set_log_book(&log_book);
  int failures = 0;
  if (terminal) {
    fmt::print("cerebro repl: {}. help lists the commands; Tab completes; quit leaves.\n",
               session.embedded
                   ? fmt::format("embedded cluster, {} workers, state in {}", session.embedded->workers(), o.state_dir)
                   : "attached to the coordinator at " + client.where());
    cli::LineEditor editor(cli::default_history_file(),
                           [&](const std::vector<std::string>& words, const std::string& prefix) {
                             return commands.complete(words, prefix);
                           });
    if (session.embedded) editor.show_log(&log_book);
    while (auto line = editor.read("cerebro> ")) {
      auto words = cli::split_words(*line);
      if (!words.empty() && cli::parse_session_command(words[0]) == cli::SessionCommand::quit) break;
      if (!run_line(commands, client, words)) ++failures;
      std::fflush(stdout);
    }
  } else {
    // Scripts: no prompts, '#' starts a comment; the exit code says whether
    // every command succeeded.
    for (std::string line; std::getline(std::cin, line);) {
      auto words = cli::split_words(line.substr(0, line.find('#')));
      if (!words.empty() && cli::parse_session_command(words[0]) == cli::SessionCommand::quit) break;
      if (!run_line(commands, client, words)) ++failures;
      std::fflush(stdout);
    }
  }
  // Leave without tearing the actor system down: that would wait for the
  // embedded cluster's running experiments (and, attached, for the remote
  // node's proxies). The history is saved, output flushed.
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(!terminal && failures > 0 ? 1 : 0);
}

cli::CommandAction setup(CLI::App& repl) {
  auto o = std::make_shared<ReplOptions>();
  o->state_dir = (fs::path("runs") / ("repl-" + cli::timestamp())).string();
  cli::add_optional_cluster_options(
      repl, o->cluster, o->token_file,
      "Attach to a coordinator at host:port (default: an embedded cluster in this process)");
  repl.add_option("--state", o->state_dir,
                  "Embedded cluster: state directory (experiments, shard cache; default: runs/repl-<time>)");
  repl.add_option("--workers", o->workers, "Embedded cluster: workers (default: one per core)")
      ->check(CLI::PositiveNumber);
  cli::add_connect_timeout_option(repl, o->connect_timeout_s);
  cli::add_tls_options(repl, o->tls);
  cli::add_ui_option(repl, o->ui);
  // Running experiments end with an embedded cluster; attached ones go on.
  return [o]() -> int { repl_main(*o); };
}

const cli::CommandRegistrar registrar{
    {"repl", "Steer experiments by hand: submit, watch, pause, stop, add, clone, export", 100, setup}};

}  // namespace

}  // namespace cerebro
