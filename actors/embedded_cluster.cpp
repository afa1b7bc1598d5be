#include "actors/embedded_cluster.hpp"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "actors/agent_heartbeat.hpp"
#include "actors/coordinator.hpp"
#include "actors/experiment_runner.hpp"
#include "models/run_setup.hpp"
#include "runtime/base/log_lines.hpp"
#include "runtime/net/error_category.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

std::string random_token() {
  std::random_device rd;
  return fmt::format("embedded-{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

}  // namespace

Result<EmbeddedCluster> EmbeddedCluster::start(caf::actor_system& system, const EmbeddedClusterOptions& options) {
  if (options.state_dir.empty()) return Status::invalid_argument("the embedded cluster needs a state directory");
  std::error_code ec;
  fs::create_directories(fs::path(options.state_dir) / "experiments", ec);
  if (ec) return Status::io_error(fmt::format("{}: cannot create: {}", options.state_dir, ec.message()));
  EmbeddedCluster cluster;
  cluster.token_ = random_token();
  cluster.workers_ = options.workers > 0 ? options.workers : default_workers();
  // Clients hold the same typed handle as they do over the network.
  coordinator_config gateway{cluster.token_, options.state_dir, "embedded"};
  gateway.fixed_agents = true;  // not published: no other agent can join
  cluster.gateway_ = spawn_coordinator(system, gateway);
  auto local = spawn_agent(
      system, agent_config{"local", (fs::path(options.state_dir) / "agent").string(), cluster.workers_, true});
  cluster.agent_ = local.agent;
  cluster.workers_list_ = local.workers;
  agent_resources resources{"local", cluster.workers_, static_cast<int32_t>(std::thread::hardware_concurrency()),
                            static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE), 1.0};
  join_request join{cluster.token_, resources, local.agent, local.workers};
  caf::scoped_actor self(system);
  Status joined = Status::unavailable("the coordinator did not answer the join");
  self->request(cluster.gateway_, std::chrono::seconds(10), join_atom::value, join)
      .receive(
          [&](const join_reply& reply) {
            if (!reply.accepted) {
              joined = Status::failed_precondition("the coordinator refused: " + reply.reason);
              return;
            }
            joined = Status::ok_status();
            // Answers the coordinator's liveness check for the in-process
            // agent, as a remote agent's heartbeat does; rejoins the same
            // gateway if it dropped the agent after a stall.
            agent_heartbeat_config heartbeat;
            heartbeat.join = join;
            heartbeat.joined_gateway = cluster.gateway_;
            heartbeat.agent_id = reply.agent_id;
            heartbeat.events.lost = [](const std::string& why) {
              emit_log_line("agent local: lost the coordinator (" + why + "); rejoining");
            };
            cluster.heartbeat_ = spawn_agent_heartbeat(system, std::move(heartbeat));
          },
          [&](const caf::error& e) { joined = to_status(e); });
  if (!joined.ok()) {
    cluster.stop();
    return joined;
  }
  return cluster;
}

void EmbeddedCluster::stop() {
  if (heartbeat_) caf::anon_send_exit(heartbeat_, caf::exit_reason::user_shutdown);
  if (gateway_) caf::anon_send_exit(gateway_, caf::exit_reason::user_shutdown);
  if (agent_) caf::anon_send_exit(agent_, caf::exit_reason::user_shutdown);
  for (auto& w : workers_list_) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
}

}  // namespace cerebro
