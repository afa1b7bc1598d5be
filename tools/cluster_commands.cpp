#include "tools/cluster_commands.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <caf/openssl/all.hpp>

#include "actors/actors.hpp"
#include "actors/client.hpp"
#include "actors/coordinator.hpp"
#include "actors/system_config.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "runtime/net/frame_guard.hpp"
#include "runtime/search/spec_loader.hpp"
#include "runtime/spec/spec.hpp"
#include "tools/progress.hpp"
#include "tools/status_format.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

int fail(const std::string& message) {
  fmt::print(stderr, "error: {}\n", message);
  return 1;
}

// Blocks until SIGINT or SIGTERM.
void wait_for_stop_signal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
}

// Signals go to the waiting main thread, not to CAF's threads: block them
// before the actor system starts its threads.
void block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

Result<std::string> token_from(const std::string& path) {
  if (path.empty()) return Status::error("--token-file is required");
  return read_token_file(path);
}

// A client's connection to the coordinator's gateway (status, run --cluster).
struct ClientSession {
  explicit ClientSession(const ClientOptions& o, std::string token)
      : config(system_role::client, o.tls), system(config) {
    auto at = parse_endpoint(o.cluster);
    auto connected = Client::connect(system, GatewayAddress{at.host, at.port, o.tls.enabled()}, std::move(token),
                                     o.connect_timeout_s);
    if (connected.ok()) {
      client = std::move(connected).value();
      client->reconnect_timeout_s = o.reconnect_timeout_s;
    } else {
      error = connected.error();
    }
  }
  cerebro_system_config config;
  caf::actor_system system;
  std::unique_ptr<Client> client;
  std::string error;  // empty when connected
};

// Sends a heartbeat every kHeartbeatInterval and waits for its answer: a
// dead coordinator shows up as a down message (its connection closed), a hung
// one or a silently broken connection as an unanswered heartbeat, and a
// restarted one that does not know this agent id answers false. Returns why
// the coordinator was lost.
constexpr const char* kUnknownAgent = "it does not know this agent";

std::string keep_heartbeat(caf::scoped_actor& self, const caf::actor& coordinator, int32_t agent_id) {
  constexpr auto kHeartbeatInterval = std::chrono::seconds(2);
  constexpr auto kAnswerTimeout = std::chrono::seconds(8);
  for (;;) {
    std::string lost;
    self->request(coordinator, kAnswerTimeout, heartbeat_atom::value, agent_id)
        .receive([&](bool known) { lost = known ? "" : kUnknownAgent; },
                 [&](const caf::error& e) { lost = "heartbeat unanswered: " + self->system().render(e); });
    if (!lost.empty()) return lost;
    self->receive([&](const caf::down_msg&) { lost = "connection closed"; }, caf::after(kHeartbeatInterval) >> [] {});
    if (!lost.empty()) return lost;
  }
}

// What the coordinator listens through: the guard when TLS is off (kept alive
// for the process's lifetime), the middleman itself with TLS.
struct Listening {
  uint16_t port = 0;
  std::unique_ptr<FrameGuard> guard;
};

Result<Listening> publish_with_tls(caf::actor_system& system, const caf::actor& coordinator, const Endpoint& at) {
  // reuse: a restarted coordinator must get its port back while old
  // connections linger in TIME_WAIT (a live listener still blocks it).
  auto port = caf::openssl::publish(coordinator, at.port, at.host.c_str(), true);
  if (!port) return Status::error(fmt::format("cannot listen on {}:{}: {}", at.host, at.port, system.render(port.error())));
  return Listening{*port, nullptr};
}

Result<Listening> publish_guarded(caf::actor_system& system, const caf::actor& coordinator, const Endpoint& at,
                                  const CoordinatorOptions& o) {
  // An ephemeral loopback port only this process knows: the guard's relay.
  auto inner = system.middleman().publish(coordinator, 0, "127.0.0.1", true);
  if (!inner) return Status::error(fmt::format("cannot listen on 127.0.0.1 (internal): {}", system.render(inner.error())));
  FrameGuardConfig guard{at.host, at.port, *inner, static_cast<uint64_t>(o.max_message_mb) * 1024 * 1024};
  auto started = FrameGuard::start(guard, [](const std::string& line) {
    fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
  });
  if (!started.ok()) return started.status();
  auto port = started.value()->port();
  return Listening{port, std::move(started).value()};
}

int64_t physical_memory() { return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE); }

}  // namespace

Endpoint parse_endpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos) throw Error(fmt::format("\"{}\" is not host:port", text));
  Endpoint e;
  if (colon > 0) e.host = text.substr(0, colon);
  try {
    size_t used = 0;
    auto port = std::stoul(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || port > 65535) throw std::out_of_range("port");
    e.port = static_cast<uint16_t>(port);
  } catch (const std::exception&) {
    throw Error(fmt::format("\"{}\": the port must be a number from 0 to 65535", text));
  }
  return e;
}

int coordinator_main(const CoordinatorOptions& o) {
  auto token = token_from(o.token_file);
  if (!token.ok()) return fail(token.error());
  if (o.state_dir.empty()) return fail("--state DIR is required");
  std::error_code ec;
  fs::create_directories(fs::path(o.state_dir) / "experiments", ec);
  if (ec) return fail(fmt::format("--state {}: cannot create: {}", o.state_dir, ec.message()));
  auto at = parse_endpoint(o.listen);
  block_stop_signals();
  if (auto p = o.tls.problem(); !p.empty()) return fail(p);
  cerebro_system_config config(system_role::coordinator, o.tls);
  caf::actor_system system(config);
  auto coordinator =
      spawn_coordinator(system, coordinator_config{*token, o.state_dir, o.listen, o.heartbeat_timeout_s});
  // Without TLS, peers reach the middleman only through the frame guard,
  // which refuses oversized BASP frames before CAF allocates them; with TLS
  // only certificate holders can connect at all.
  auto listening = o.tls.enabled() ? publish_with_tls(system, coordinator, at) : publish_guarded(system, coordinator, at, o);
  if (!listening.ok()) {
    caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
    return fail(listening.error());
  }
  auto port = listening->port;
  fmt::print("listening on {}:{}{}\n", at.host, port, o.tls.enabled() ? " (TLS)" : "");
  std::fflush(stdout);
  wait_for_stop_signal();
  fmt::print(stderr, "coordinator: stopping\n");
  // Units are durable when acknowledged: nothing to flush. Leave at once, even
  // with experiments running (they resume from the state store).
  std::_Exit(0);
}

int agent_main(const AgentOptions& o) {
  auto token = token_from(o.token_file);
  if (!token.ok()) return fail(token.error());
  if (auto v = validate_name("--name", o.name); !v.ok()) return fail(v.message());
  if (o.workers < 1) return fail("--workers must be >= 1");
  if (o.data_dir.empty()) return fail("--data-dir is required");
  std::error_code ec;
  fs::create_directories(o.data_dir, ec);
  auto probe = fs::path(o.data_dir) / ".write-test";
  if (ec || !std::ofstream(probe)) return fail(fmt::format("--data-dir {} is not writable", o.data_dir));
  fs::remove(probe, ec);
  auto at = parse_endpoint(o.join);
  models::configure_threads(o.threads_per_worker);
  block_stop_signals();
  std::thread([] {
    wait_for_stop_signal();
    fmt::print(stderr, "agent: stopping\n");
    std::_Exit(0);
  }).detach();

  if (auto p = o.tls.problem(); !p.empty()) return fail(p);
  cerebro_system_config config(system_role::agent, o.tls);
  caf::actor_system system(config);
  auto local = spawn_agent(system, agent_config{o.name, o.data_dir, o.workers, false});
  agent_resources resources{o.name, o.workers, static_cast<int32_t>(std::thread::hardware_concurrency()),
                            physical_memory(), models::calibrate_speed()};
  caf::scoped_actor self(system);
  for (;;) {
    // Right after a coordinator died the middleman may still hand out its
    // cached, dead gateway: the join request then times out and we retry.
    auto gateway = find_gateway(system, GatewayAddress{at.host, at.port, o.tls.enabled()}, -1,
                                [](const std::string& why) { fmt::print(stderr, "{}\n", why); });
    if (!gateway) continue;
    join_reply reply;
    bool answered = false;
    self->request(*gateway, std::chrono::seconds(10), join_atom::value,
                  join_request{*token, resources, local.agent, local.workers})
        .receive([&](join_reply& r) { reply = std::move(r), answered = true; },
                 [&](const caf::error& e) {
                   fmt::print(stderr, "agent {}: join failed: {}\n", o.name, system.render(e));
                 });
    if (!answered) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (!reply.accepted) {
      fail(fmt::format("the coordinator refused agent {}: {}", o.name, reply.reason));
      // Leave at once: tearing the actor system down waits for remote proxies
      // of the refusing coordinator, which can take a long time; an agent
      // holds nothing that needs flushing.
      std::_Exit(1);
    }
    fmt::print(stderr, "agent {}: joined {}:{} as agent {}\n", o.name, at.host, at.port, reply.agent_id);
    self->monitor(reply.coordinator);
    auto lost = keep_heartbeat(self, reply.coordinator, reply.agent_id);
    fmt::print(stderr, "agent {}: lost the coordinator ({}); rejoining\n", o.name, lost);
  }
}

int status_main(const ClientOptions& o) {
  auto token = token_from(o.token_file);
  if (!token.ok()) return fail(token.error());
  if (auto p = o.tls.problem(); !p.empty()) return fail(p);
  ClientSession session(o, *token);
  if (!session.error.empty()) return fail(session.error);
  auto status = session.client->status();
  if (!status.ok()) return fail(status.error());
  fmt::print("{}", cli::format_cluster_status(*status));
  return 0;
}

namespace {

// Runs `call` (a Client call that follows an experiment) with a progress
// printer: progress lines and events as an embedded run shows them.
Result<run_files> follow(const std::string& metric,
                         const std::function<Result<run_files>(const Client::Progress&)>& call) {
  cli::ProgressPrinter printer(metric);
  auto result = call([&](const progress_update& p) {
    if (p.units_total == 0 && !p.event.empty())
      printer.line(p.event);
    else
      printer.update(p);
  });
  printer.finish();
  return result;
}

// Writes the run files the coordinator sent into out_dir and names the best.
int save_run_files(const Result<run_files>& result, const std::string& experiment, const std::string& out_dir) {
  if (!result.ok()) return fail(result.error());
  auto& files = *result;
  if (!files.error.empty()) return fail(files.error);
  if (auto written = write_run_files(files, out_dir); !written.ok()) return fail(written.message());
  auto summary = nlohmann::json::parse(std::ifstream(fs::path(out_dir) / "summary.json"), nullptr, false);
  fmt::print("\nexperiment {} finished; run files in {}\n", experiment, out_dir);
  if (!summary.is_discarded() && summary["best"].is_object())
    fmt::print("best: config {} val_accuracy {:.4f} test_accuracy {:.4f}\n", summary["best"]["id"].get<int>(),
               summary["best"]["val_accuracy"].get<double>(), summary["best"]["test_accuracy"].get<double>());
  return 0;
}

// What stops a following client before it connects: an occupied run
// directory, or TLS files that are missing.
std::string client_problem(const ClientOptions& o, const std::string& out_dir) {
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_empty(out_dir, ec))
    return fmt::format("{}: the run directory already exists and is not empty", out_dir);
  return o.tls.problem();
}

}  // namespace

int run_on_cluster(const ClientOptions& o, const std::string& spec_path, const std::string& out_dir) {
  auto token = token_from(o.token_file);
  if (!token.ok()) return fail(token.error());
  auto spec = parse_spec_file(spec_path);  // the same errors as an embedded run, before any traffic
  if (!spec.ok()) return fail(spec.error());
  if (auto p = client_problem(o, out_dir); !p.empty()) return fail(p);
  ClientSession session(o, *token);
  if (!session.error.empty()) return fail(session.error);
  std::string experiment;
  auto result = follow(to_string(spec->metric), [&](const Client::Progress& progress) {
    return session.client->run(
        spec->source_text, spec->spec_dir, spec_path,
        [&](const std::string& id) {
          experiment = id;
          fmt::print(stderr, "submitted experiment {}\n", experiment);
        },
        progress);
  });
  return save_run_files(result, experiment, out_dir);
}

int attach_main(const ClientOptions& o, const std::string& experiment, const std::string& out_dir) {
  auto token = token_from(o.token_file);
  if (!token.ok()) return fail(token.error());
  if (auto p = client_problem(o, out_dir); !p.empty()) return fail(p);
  ClientSession session(o, *token);
  if (!session.error.empty()) return fail(session.error);
  std::string metric = "val_accuracy";
  auto result = follow(metric, [&](const Client::Progress& progress) {
    return session.client->attach(
        experiment,
        [&](const nlohmann::json& attached) {
          fmt::print(stderr, "following experiment {} ({})\n", experiment, attached["status"].get<std::string>());
        },
        progress);
  });
  return save_run_files(result, experiment, out_dir);
}

}  // namespace cerebro
