// `cerebro agent`: a node agent that joins a coordinator, hosts its workers,
// and rejoins when it loses the coordinator; runs until SIGINT or SIGTERM.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "actors/client.hpp"
#include "actors/system_config.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "tools/cluster_client.hpp"
#include "tools/command_registry.hpp"
#include "tools/command_support.hpp"
#include "tools/shared_options.hpp"
#include "tools/stop_signals.hpp"

namespace fs = std::filesystem;

namespace cerebro::cli {

namespace {

struct AgentOptions {
  std::string join = "127.0.0.1:7070";
  std::string token_file;
  int workers = 1;
  std::string data_dir;
  std::string name;
  int threads_per_worker = 1;
  int64_t memory_mb = 0;  // 0: hold every partition in memory
  std::string gang_address = "127.0.0.1";  // issue 14: where gang sockets bind
  tls_options tls;
};

// Sends a heartbeat every kHeartbeatInterval and waits for its answer: a
// dead coordinator shows up as a down message (its connection closed), a hung
// one or a silently broken connection as an unanswered heartbeat, and a
// restarted one that does not know this agent id answers false. Returns why
// the coordinator was lost.
constexpr const char* kUnknownAgent = "it does not know this agent";

std::string keep_heartbeat(caf::scoped_actor& self, const coordinator_actor& coordinator, int32_t agent_id) {
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

int64_t physical_memory() { return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE); }

int agent_main(const AgentOptions& o) {
  auto token = read_cluster_token(o.token_file);
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
  auto local =
      spawn_agent(system, agent_config{o.name, o.data_dir, o.workers, false, o.memory_mb << 20, o.gang_address});
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

CommandAction setup(CLI::App& agent) {
  auto o = std::make_shared<AgentOptions>();
  agent.add_option("--join", o->join, "The coordinator's host:port")->capture_default_str();
  add_token_file_option(agent, o->token_file);
  agent.add_option("--workers", o->workers, "Workers on this node")->capture_default_str();
  agent.add_option("--threads-per-worker", o->threads_per_worker, "LibTorch threads per worker")
      ->capture_default_str();
  agent.add_option("--data-dir", o->data_dir, "Where this node caches its partitions")->required();
  agent.add_option("--name", o->name, "This agent's name, unique in the cluster")->required();
  agent.add_option("--memory-mb", o->memory_mb,
                   "Memory for the partitions this node holds (0: no limit); partitions beyond it are "
                   "memory-mapped from disk (out of core)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  agent.add_option("--gang-address", o->gang_address,
                   "This node's cluster address: the sockets of a data-parallel gang's allreduce bind to it, "
                   "only while the gang runs (peers must reach it; loopback for agents on one machine)")
      ->capture_default_str();
  add_tls_options(agent, o->tls);
  return [o] { return agent_main(*o); };
}

const CommandRegistrar registrar{
    {"agent", "Run a node agent that joins a coordinator and hosts workers", 30, setup}};

}  // namespace

}  // namespace cerebro::cli
