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
#include "actors/agent_heartbeat.hpp"
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
  int64_t memory_mb = 0;                   // 0: hold every partition in memory
  std::string gang_address = "127.0.0.1";  // Where gang sockets bind
  tls_options tls;
};

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
  // Joins, heartbeats, and rejoins a lost coordinator (actors/agent_heartbeat.hpp).
  agent_heartbeat_config membership;
  membership.join = join_request{*token, resources, local.agent, local.workers};
  membership.finder = spawn_gateway_finder(system, GatewayAddress{at.host, at.port, o.tls.enabled()},
                                           [](const std::string& why) { fmt::print(stderr, "{}\n", why); });
  membership.events.joined = [name = o.name, at](int32_t id) {
    fmt::print(stderr, "agent {}: joined {}:{} as agent {}\n", name, at.host, at.port, id);
  };
  membership.events.lost = [name = o.name](const std::string& why) {
    fmt::print(stderr, "agent {}: lost the coordinator ({}); rejoining\n", name, why);
  };
  membership.events.join_failed = [name = o.name](const std::string& error) {
    fmt::print(stderr, "agent {}: join failed: {}\n", name, error);
  };
  membership.events.refused = [name = o.name](const std::string& reason) {
    fail(fmt::format("the coordinator refused agent {}: {}", name, reason));
    // Leave at once: tearing the actor system down waits for remote proxies
    // of the refusing coordinator, which can take a long time; an agent
    // holds nothing that needs flushing.
    std::_Exit(1);
  };
  auto heartbeat = spawn_agent_heartbeat(system, std::move(membership));
  // Runs until SIGINT or SIGTERM (the thread above ends the process).
  caf::scoped_actor self(system);
  self->wait_for(heartbeat);
  return 1;
}

CommandAction setup(CLI::App& agent) {
  auto o = std::make_shared<AgentOptions>();
  agent.add_option("--join", o->join, "The coordinator's host:port")->capture_default_str();
  add_token_file_option(agent, o->token_file);
  agent.add_option("--workers", o->workers, "Workers on this node")->capture_default_str();
  agent.add_option("--threads-per-worker", o->threads_per_worker, "LibTorch threads per worker")->capture_default_str();
  agent.add_option("--data-dir", o->data_dir, "Where this node caches its partitions")->required();
  agent.add_option("--name", o->name, "This agent's name, unique in the cluster")->required();
  agent
      .add_option("--memory-mb", o->memory_mb,
                  "Memory for the partitions this node holds (0: no limit); partitions beyond it are "
                  "memory-mapped from disk (out of core)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  agent
      .add_option("--gang-address", o->gang_address,
                  "This node's cluster address: the sockets of a data-parallel gang's allreduce bind to it, "
                  "only while the gang runs (peers must reach it; loopback for agents on one machine)")
      ->capture_default_str();
  add_tls_options(agent, o->tls);
  return [o] { return agent_main(*o); };
}

const CommandRegistrar registrar{{"agent", "Run a node agent that joins a coordinator and hosts workers", 30, setup}};

}  // namespace

}  // namespace cerebro::cli
