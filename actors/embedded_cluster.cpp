#include "actors/embedded_cluster.hpp"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "actors/coordinator.hpp"
#include "actors/experiment_runner.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

std::string random_token() {
  std::random_device rd;
  return fmt::format("embedded-{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

// Answers the coordinator's liveness check for the in-process agent, as a
// remote agent's heartbeat loop does.
caf::behavior heartbeat_behavior(caf::event_based_actor* self, coordinator_actor coordinator, int32_t agent_id) {
  self->send(self, heartbeat_atom::value);
  return {[=](heartbeat_atom) {
    self->request(coordinator, std::chrono::seconds(8), heartbeat_atom::value, agent_id)
        .then([](bool) {}, [](const caf::error&) {});
    self->delayed_send(self, std::chrono::seconds(2), heartbeat_atom::value);
  }};
}

}  // namespace

Result<EmbeddedCluster> EmbeddedCluster::start(caf::actor_system& system, const EmbeddedClusterOptions& options) {
  if (options.state_dir.empty()) return Status::error("the embedded cluster needs a state directory");
  std::error_code ec;
  fs::create_directories(fs::path(options.state_dir) / "experiments", ec);
  if (ec) return Status::error(fmt::format("{}: cannot create: {}", options.state_dir, ec.message()));
  EmbeddedCluster cluster;
  cluster.token_ = random_token();
  cluster.workers_ = options.workers > 0 ? options.workers : default_workers();
  // Clients hold the same typed handle as they do over the network.
  coordinator_config gateway{cluster.token_, options.state_dir, "embedded"};
  gateway.fixed_agents = true;  // not published: no other agent can join
  cluster.gateway_ = spawn_coordinator(system, gateway);
  auto local = spawn_agent(system, agent_config{"local", (fs::path(options.state_dir) / "agent").string(),
                                                cluster.workers_, true});
  cluster.agent_ = local.agent;
  cluster.workers_list_ = local.workers;
  agent_resources resources{"local", cluster.workers_, static_cast<int32_t>(std::thread::hardware_concurrency()),
                            static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE), 1.0};
  caf::scoped_actor self(system);
  Status joined = Status::error("the coordinator did not answer the join");
  self->request(cluster.gateway_, std::chrono::seconds(10), join_atom::value,
                join_request{cluster.token_, resources, local.agent, local.workers})
      .receive(
          [&](const join_reply& reply) {
            joined = reply.accepted ? Status::ok_status() : Status::error("the coordinator refused: " + reply.reason);
            if (reply.accepted) cluster.heartbeat_ = system.spawn(heartbeat_behavior, cluster.gateway_, reply.agent_id);
          },
          [&](const caf::error& e) { joined = Status::error(error_text(e)); });
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
