#pragma once
// A node agent's membership of its coordinator, as an actor
// (agent_heartbeat_actor, runtime/net/interfaces.hpp): it joins, sends a
// heartbeat every interval and waits for the answer. A dead coordinator shows
// up as a down message (its connection closed), a hung one or a silently
// broken connection as an unanswered heartbeat, and a restarted one (or one
// that dropped this agent after a silence) answers false: after each, it
// finds the gateway again and rejoins. `cerebro agent` and the embedded
// cluster (actors/embedded_cluster.hpp) keep their agents joined with it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include <caf/all.hpp>

#include "actors/client.hpp"
#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/interfaces.hpp"

namespace cerebro {

// What the heartbeat tells its owner (each may be empty).
struct agent_heartbeat_events {
  std::function<void(int32_t agent_id)> joined;
  // Why the coordinator was lost, before it rejoins: "connection closed",
  // "heartbeat unanswered: ...", or kUnknownAgent.
  std::function<void(const std::string& why)> lost;
  // A join got no answer (e.g. the middleman handed out a dead gateway it
  // still had): it looks the gateway up again in a moment.
  std::function<void(const std::string& error)> join_failed;
  // The coordinator refused the join: the heartbeat ends after this.
  std::function<void(const std::string& reason)> refused;
};

// Why a restarted coordinator (or one that dropped the agent) is lost.
constexpr const char* kUnknownAgent = "it does not know this agent";

struct agent_heartbeat_config {
  join_request join;  // the token, the resources, the agent and its workers
  // Looks the gateway up, at the start and after each loss. Without one the
  // heartbeat rejoins the gateway it had (an embedded cluster's, in this
  // process) and ends when that gateway is gone.
  gateway_finder_actor finder;
  // Already joined (the embedded cluster joins before it spawns this): the
  // gateway and the agent's id there.
  coordinator_actor joined_gateway;
  int32_t agent_id = -1;
  agent_heartbeat_events events;
  std::chrono::milliseconds interval{2000};        // between an answer and the next heartbeat
  std::chrono::milliseconds answer_timeout{8000};  // a heartbeat unanswered for this long: lost
  std::chrono::milliseconds join_timeout{10000};
  std::chrono::milliseconds retry_delay{1000};  // after a join that got no answer
};

agent_heartbeat_actor spawn_agent_heartbeat(caf::actor_system& system, agent_heartbeat_config config);

// The middleman's lookup of the gateway at `address`, retried until it
// answers (find_gateway in actors/client.hpp), in a thread of its own;
// `retrying` hears why each failed attempt failed.
gateway_finder_actor spawn_gateway_finder(caf::actor_system& system, GatewayAddress address,
                                          std::function<void(const std::string&)> retrying);

}  // namespace cerebro
