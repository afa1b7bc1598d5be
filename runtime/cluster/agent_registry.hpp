#pragma once
// The coordinator's agents: who may join, under which id, and who is dropped
// when silent. Plain bookkeeping with time passed in (the coordinator's actor
// feeds it its clock; tests feed it numbers); the agents' actor handles stay
// in the actor, keyed by the ids given here.
//
//   A join is refused, in this order, for a wrong token (compared in constant
//   time), resources out of range, a malformed request (no agent actor, or
//   not one worker handle per declared worker), or a name a live agent has.
//   An accepted agent gets a new id (never reused) and is alive as of the join.
//   An agent silent (no join, no heartbeat) for longer than the timeout is
//   dropped: it rejoins when it answers again.
//
// Not thread safe: one owner (the coordinator actor's state).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cluster/agent_liveness.hpp"
#include "runtime/cluster/peer_checks.hpp"

namespace cerebro {

// What an agent asks to join with, as far as the registry judges it.
struct JoinAttempt {
  std::string token;
  agent_resources resources;
  bool names_its_agent = false;  // the request carries the agent's actor
  int32_t worker_handles = 0;    // how many worker actors it carries
  std::string node;              // where it came from (host name or node id)
};

enum class JoinRefusal { wrong_token, bad_resources, malformed_request, name_taken };

// A join's outcome: the new id, or why it was refused.
struct JoinDecision {
  AgentId id = -1;                     // >= 1 when accepted
  std::optional<JoinRefusal> refusal;  // set when refused
  std::string reason;                  // what the agent is told ("wrong token", ...)
  bool accepted() const { return !refusal; }
};

// The coordinator's log line for a refusal (without "refused a join from node N: ").
std::string describe(const JoinDecision& refused, const JoinAttempt& attempt);

struct AgentInfo {
  AgentId id = 0;
  agent_resources resources;
  std::string node;
};

class AgentRegistry {
 public:
  using TimePoint = AgentLiveness::TimePoint;
  using Duration = AgentLiveness::Duration;

  AgentRegistry(std::string token, Duration timeout);

  JoinDecision join(const JoinAttempt& attempt, TimePoint now);
  // A heartbeat from agent `id` at `now`; `from_its_node`: it came from the
  // node the agent joined from. False (and ignored) for an id that is not a
  // live agent here (after a restart, or once dropped) or from another node.
  bool heartbeat(AgentId id, bool from_its_node, TimePoint now);
  // The agent left by other means (its connection closed): removed; what it was.
  std::optional<AgentInfo> leave(AgentId id);

  struct Dropped {
    AgentInfo agent;
    Duration silence{0};
  };
  // The agents silent for longer than the timeout at `now`, in id order: removed.
  std::vector<Dropped> tick(TimePoint now);

  const std::map<AgentId, AgentInfo>& agents() const { return agents_; }
  const AgentInfo* find(AgentId id) const;
  bool empty() const { return agents_.empty(); }
  std::optional<TimePoint> last_heard(AgentId id) const { return liveness_.last_heard(id); }
  // When the last agent was accepted (none yet: nullopt).
  std::optional<TimePoint> last_join() const { return last_join_; }
  bool token_matches(const std::string& presented) const { return tokens_equal(presented, token_); }

 private:
  std::string token_;
  AgentLiveness liveness_;
  std::map<AgentId, AgentInfo> agents_;
  AgentId next_id_ = 1;
  std::optional<TimePoint> last_join_;
};

}  // namespace cerebro
