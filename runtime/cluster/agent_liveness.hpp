#pragma once
// Which agents are alive, judged by their heartbeats against one timeout.
// Time is passed in (the coordinator's actor feeds it the clock; tests feed
// it numbers), so the rule is plain and testable without sleeping:
//
//   an agent is lost once it has been silent (no join, no heartbeat) for
//   longer than the timeout; tick() reports each lost agent once and forgets it.
//
// The coordinator keeps one for the cluster (its --heartbeat-timeout: a lost
// agent is dropped and must rejoin) and one per running experiment (the
// spec's [cluster] heartbeat_timeout: a lost agent's units are requeued).
// Not thread safe: one owner (an actor's state).

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace cerebro {

using AgentId = int32_t;

class AgentLiveness {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;
  using Duration = std::chrono::duration<double>;

  explicit AgentLiveness(Duration timeout) : timeout_(timeout) {}

  // The agent is alive as of `now` (a join, or an experiment starting with an
  // agent last heard from at `now`). Joining again restarts its clock.
  void joined(AgentId agent, TimePoint now);
  // A heartbeat at `now`; false (and ignored) for an agent not tracked here
  // (never joined, left, or already reported lost).
  bool heartbeat(AgentId agent, TimePoint now);
  // The agent is gone by other means (it left, its connection closed): it is
  // no longer tracked and tick() will not report it.
  void left(AgentId agent);
  // The agents silent for longer than the timeout at `now`, in id order, with
  // how long each was silent; each is reported once and no longer tracked.
  struct Lost {
    AgentId agent = 0;
    Duration silence{0};
  };
  std::vector<Lost> tick(TimePoint now);

  bool tracks(AgentId agent) const { return last_heard_.count(agent) > 0; }
  // When the agent was last heard from, if tracked.
  std::optional<TimePoint> last_heard(AgentId agent) const;
  Duration timeout() const { return timeout_; }

 private:
  Duration timeout_;
  std::map<AgentId, TimePoint> last_heard_;
};

}  // namespace cerebro
