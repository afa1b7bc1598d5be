// `cerebro coordinator`: a cluster coordinator that agents join and clients
// submit experiments to; runs until SIGINT or SIGTERM.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <caf/openssl/all.hpp>

#include "actors/actors.hpp"
#include "actors/coordinator.hpp"
#include "actors/http/http_server.hpp"
#include "actors/system_config.hpp"
#include "runtime/net/frame_guard.hpp"
#include "tools/cluster_client.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"
#include "tools/shared_options.hpp"
#include "tools/stop_signals.hpp"

namespace fs = std::filesystem;

namespace cerebro::cli {

namespace {

struct CoordinatorOptions {
  std::string listen = "127.0.0.1:7070";
  std::string state_dir;
  std::string token_file;
  double heartbeat_timeout_s = 10;
  // Without TLS, the largest message a peer may send (the frame guard's limit).
  int max_message_mb = 1024;
  tls_options tls;
  std::string http;  // host:port of the HTTP API and dashboard; empty: none
  int upload_max_mb = static_cast<int>(api::kDefaultUploadMaxBytes >> 20);  // a submission's spec and files
  std::vector<std::string> data_roots;
};

// Absolute and resolved, so a spec's paths compare with them (runtime/spec/spec_paths.hpp); an error names a
// root that is not a directory.
Result<std::vector<std::string>> resolved_data_roots(const std::vector<std::string>& given) {
  std::vector<std::string> roots;
  for (const auto& root : given) {
    std::error_code ec;
    auto dir = fs::canonical(root, ec);
    if (ec || !fs::is_directory(dir, ec))
      return Status::invalid_argument(fmt::format("--data-root {}: not a directory", root));
    roots.push_back(dir.string());
  }
  return roots;
}

// What the coordinator listens through: the guard when TLS is off (kept alive
// for the process's lifetime), the middleman itself with TLS.
struct Listening {
  uint16_t port = 0;
  std::unique_ptr<FrameGuard> guard;
};

Result<Listening> publish_with_tls(caf::actor_system& system, const coordinator_actor& coordinator,
                                   const Endpoint& at) {
  // reuse: a restarted coordinator must get its port back while old
  // connections linger in TIME_WAIT (a live listener still blocks it).
  auto port = caf::openssl::publish(coordinator, at.port, at.host.c_str(), true);
  if (!port)
    return Status::io_error(fmt::format("cannot listen on {}:{}: {}", at.host, at.port, system.render(port.error())));
  return Listening{*port, nullptr};
}

Result<Listening> publish_guarded(caf::actor_system& system, const coordinator_actor& coordinator, const Endpoint& at,
                                  const CoordinatorOptions& o) {
  // An ephemeral loopback port only this process knows: the guard's relay.
  auto inner = system.middleman().publish(coordinator, 0, "127.0.0.1", true);
  if (!inner)
    return Status::io_error(fmt::format("cannot listen on 127.0.0.1 (internal): {}", system.render(inner.error())));
  FrameGuardConfig guard{at.host, at.port, *inner, static_cast<uint64_t>(o.max_message_mb) * 1024 * 1024};
  auto started = FrameGuard::start(guard, [](const std::string& line) {
    fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
  });
  if (!started.ok()) return started.status();
  auto port = started.value()->port();
  return Listening{port, std::move(started).value()};
}

int coordinator_main(const CoordinatorOptions& o) {
  auto token = read_cluster_token(o.token_file);
  if (!token.ok()) return fail(token.error());
  if (o.state_dir.empty()) return fail("--state DIR is required");
  std::error_code ec;
  fs::create_directories(fs::path(o.state_dir) / "experiments", ec);
  if (ec) return fail(fmt::format("--state {}: cannot create: {}", o.state_dir, ec.message()));
  auto roots = resolved_data_roots(o.data_roots);
  if (!roots.ok()) return fail(roots.error());
  if (roots->empty())
    fmt::print(stderr,
               "coordinator: warning: no --data-root: a spec may name any file this process can read, so anyone "
               "with the token can make it read them (give --data-root DIR to allow only what lies under DIR)\n");
  auto at = parse_endpoint(o.listen);
  block_stop_signals();
  if (auto p = o.tls.problem(); !p.empty()) return fail(p);
  cerebro_system_config config(system_role::coordinator, o.tls);
  caf::actor_system system(config);
  // Published with its interface: peers look it up as a coordinator_actor
  // (find_gateway in actors/client.cpp), and CAF refuses a lookup with any
  // other interface.
  coordinator_config settings{*token, o.state_dir, o.listen, o.heartbeat_timeout_s};
  settings.data_roots = *roots;
  auto coordinator = spawn_coordinator(system, std::move(settings));
  // Without TLS, peers reach the middleman only through the frame guard,
  // which refuses oversized BASP frames before CAF allocates them; with TLS
  // only certificate holders can connect at all.
  auto listening =
      o.tls.enabled() ? publish_with_tls(system, coordinator, at) : publish_guarded(system, coordinator, at, o);
  if (!listening.ok()) {
    caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
    return fail(listening.error());
  }
  auto port = listening->port;
  fmt::print("listening on {}:{}{}\n", at.host, port, o.tls.enabled() ? " (TLS)" : "");
  // The HTTP API and dashboard: the cluster's token on every request, HTTPS
  // with the coordinator's certificate when it has one.
  std::unique_ptr<HttpServer> http;
  if (!o.http.empty()) {
    auto http_at = parse_endpoint(o.http);
    HttpServerOptions options;
    options.host = http_at.host;
    options.port = http_at.port;
    options.token = *token;
    options.gateway_token = *token;
    options.tls_certificate = o.tls.certificate;
    options.tls_key = o.tls.key;
    // A submission's files stay with the coordinator's state, so a restart or a resume still has them.
    options.upload_dir = (fs::path(o.state_dir) / "uploads").string();
    options.upload_max_bytes = static_cast<size_t>(o.upload_max_mb) << 20;
    auto started = HttpServer::start(system, coordinator, options);
    if (!started.ok()) {
      caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
      return fail(fmt::format("--http: {}", started.error()));
    }
    http = std::move(started).value();
    fmt::print("http on {}\n", http->url());
  }
  std::fflush(stdout);
  wait_for_stop_signal();
  fmt::print(stderr, "coordinator: stopping\n");
  // Units are durable when acknowledged: nothing to flush. Leave at once, even
  // with experiments running (they resume from the state store).
  std::_Exit(0);
}

CommandAction setup(CLI::App& coordinator) {
  auto o = std::make_shared<CoordinatorOptions>();
  coordinator.add_option("--listen", o->listen, "host:port to listen on (port 0: any free port)")
      ->capture_default_str();
  coordinator.add_option("--state", o->state_dir, "State directory (experiments, RocksDB)")->required();
  coordinator
      .add_option("--token-file", o->token_file,
                  "File holding the shared token agents and clients must present (chmod 600)")
      ->required();
  coordinator
      .add_option("--heartbeat-timeout", o->heartbeat_timeout_s,
                  "Seconds without a heartbeat before an agent is dropped (it rejoins when it answers)")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  coordinator
      .add_option("--max-message-mb", o->max_message_mb,
                  "Without TLS: the largest message (MiB) a peer may send; a larger one closes its connection")
      ->check(CLI::Range(1, 4095))
      ->capture_default_str();
  add_tls_options(coordinator, o->tls);
  coordinator.add_option("--http", o->http,
                         "host:port of the HTTP API, /metrics and the dashboard (every request needs the token; "
                         "HTTPS with the TLS options; port 0: any free port)");
  coordinator
      .add_option("--upload-max-mb", o->upload_max_mb,
                  "The largest submission over the HTTP API (MiB): its spec and the files it brings (other request "
                  "bodies: at most 1 MiB)")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  coordinator.add_option("--data-root", o->data_roots,
                         "A directory specs may read from (repeatable): every data path, .pt model and warm_start "
                         "must lie under one, or be a file the submission brought; relative paths are looked for "
                         "there too. Without it, a spec may name any file this process can read");
  return [o] { return coordinator_main(*o); };
}

const CommandRegistrar registrar{{"coordinator", "Run a cluster coordinator that agents join", 20, setup}};

}  // namespace

}  // namespace cerebro::cli
