#include "runtime/cluster/agent_liveness.hpp"

namespace cerebro {

void AgentLiveness::joined(AgentId agent, TimePoint now) { last_heard_[agent] = now; }

bool AgentLiveness::heartbeat(AgentId agent, TimePoint now) {
  auto it = last_heard_.find(agent);
  if (it == last_heard_.end()) return false;
  // A late heartbeat (delivered after a newer one) does not move the clock back.
  if (now > it->second) it->second = now;
  return true;
}

void AgentLiveness::left(AgentId agent) { last_heard_.erase(agent); }

std::vector<AgentLiveness::Lost> AgentLiveness::tick(TimePoint now) {
  std::vector<Lost> lost;
  for (auto it = last_heard_.begin(); it != last_heard_.end();) {
    Duration silence = now - it->second;
    if (silence > timeout_) {
      lost.push_back({it->first, silence});
      it = last_heard_.erase(it);
    } else {
      ++it;
    }
  }
  return lost;
}

std::optional<AgentLiveness::TimePoint> AgentLiveness::last_heard(AgentId agent) const {
  auto it = last_heard_.find(agent);
  if (it == last_heard_.end()) return std::nullopt;
  return it->second;
}

}  // namespace cerebro
