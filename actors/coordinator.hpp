#pragma once
// The coordinator: one published gateway actor. Agents join through it (token
// checked in constant time, resources validated, names unique among live
// agents) and only then learn a handle; clients submit experiments and ask for
// status through it with the same token. Experiments run here, on the agents'
// workers, with their state under the coordinator's state directory.
//
// The coordinator alone owns its tables of agents and experiments. Each
// experiment runs in its own thread (a detached runner actor, see
// actors/experiment_runner.hpp), which reports to the coordinator by message
// (its lines, progress, the actor that follows the run, the end); the
// coordinator answers status and steering from what it was told.

#include <string>

#include <caf/all.hpp>

#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/interfaces.hpp"
#include "runtime/net/messages.hpp"

namespace cerebro {

struct coordinator_config {
  std::string token;
  std::string state_dir;  // experiments/<id>/ run directories
  std::string listen;     // for status output
  // An agent without a heartbeat for this long is dropped from the cluster
  // (it rejoins when it answers again); experiments give up on it after
  // their own [cluster] heartbeat_timeout.
  double heartbeat_timeout_s = 10;
  // Its agents are all it will have (an embedded cluster: nothing else can
  // reach it to join): experiments run on a fixed cluster (ClusterView::fixed).
  bool fixed_agents = false;
};

// Its interface, coordinator_actor, is in runtime/net/interfaces.hpp (peers
// hold it: its handle crosses the network in join_reply).
coordinator_actor spawn_coordinator(caf::actor_system& system, coordinator_config config);

}  // namespace cerebro
