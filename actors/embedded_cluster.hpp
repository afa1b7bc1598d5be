#pragma once
// A whole cluster inside the caller's actor system: a coordinator gateway and
// one node agent whose workers train in this process. It is the same gateway
// a remote client talks to (one code path): the REPL without --cluster talks
// to it in-process through cerebro::Client (actors/client.hpp).

#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/base/status.hpp"
#include "runtime/net/interfaces.hpp"

namespace cerebro {

struct EmbeddedClusterOptions {
  std::string state_dir;  // experiments/<id>/ run directories, agent/ shard cache
  int workers = 0;        // 0: one per core
};

class EmbeddedCluster {
 public:
  // Spawns the coordinator and the agent in `system` and joins the agent
  // (the same token check as a remote join, with a token made up here).
  static Result<EmbeddedCluster> start(caf::actor_system& system, const EmbeddedClusterOptions& options);

  const coordinator_actor& gateway() const { return gateway_; }
  const std::string& token() const { return token_; }
  int workers() const { return workers_; }

  // Ends the coordinator, the agent, its workers and the heartbeat.
  void stop();

 private:
  coordinator_actor gateway_;
  agent_actor agent_;
  std::vector<worker_actor> workers_list_;
  agent_heartbeat_actor heartbeat_;
  std::string token_;
  int workers_ = 0;
};

}  // namespace cerebro
