#include "runtime/cluster/agent_registry.hpp"

#include <fmt/format.h>

namespace cerebro {

namespace {

JoinDecision refuse(JoinRefusal why, std::string reason) {
  JoinDecision d;
  d.refusal = why;
  d.reason = std::move(reason);
  return d;
}

}  // namespace

std::string describe(const JoinDecision& refused, const JoinAttempt& attempt) {
  if (!refused.refusal) return "accepted";
  switch (*refused.refusal) {
    case JoinRefusal::wrong_token: return "wrong token";
    case JoinRefusal::bad_resources: return refused.reason;
    case JoinRefusal::malformed_request: return "malformed request";
    case JoinRefusal::name_taken: return fmt::format("name {} is taken by a live agent", attempt.resources.name);
  }
  return refused.reason;
}

AgentRegistry::AgentRegistry(std::string token, Duration timeout) : token_(std::move(token)), liveness_(timeout) {}

JoinDecision AgentRegistry::join(const JoinAttempt& attempt, TimePoint now) {
  const auto& r = attempt.resources;
  if (!tokens_equal(attempt.token, token_)) return refuse(JoinRefusal::wrong_token, "wrong token");
  if (auto v = validate_resources(r); !v.ok()) return refuse(JoinRefusal::bad_resources, v.message());
  if (!attempt.names_its_agent || attempt.worker_handles != r.workers)
    return refuse(JoinRefusal::malformed_request, "malformed join request");
  for (const auto& [id, a] : agents_)
    if (a.resources.name == r.name)
      return refuse(JoinRefusal::name_taken, fmt::format("an agent named {} is already joined", r.name));
  JoinDecision accepted;
  accepted.id = next_id_++;
  agents_[accepted.id] = AgentInfo{accepted.id, r, attempt.node};
  liveness_.joined(accepted.id, now);
  last_join_ = now;
  return accepted;
}

bool AgentRegistry::heartbeat(AgentId id, bool from_its_node, TimePoint now) {
  if (!from_its_node || !agents_.count(id)) return false;
  return liveness_.heartbeat(id, now);
}

std::optional<AgentInfo> AgentRegistry::leave(AgentId id) {
  auto it = agents_.find(id);
  if (it == agents_.end()) return std::nullopt;
  auto info = std::move(it->second);
  agents_.erase(it);
  liveness_.left(id);
  return info;
}

std::vector<AgentRegistry::Dropped> AgentRegistry::tick(TimePoint now) {
  std::vector<Dropped> dropped;
  for (const auto& lost : liveness_.tick(now)) {
    auto it = agents_.find(lost.agent);
    if (it == agents_.end()) continue;
    dropped.push_back({std::move(it->second), lost.silence});
    agents_.erase(it);
  }
  return dropped;
}

const AgentInfo* AgentRegistry::find(AgentId id) const {
  auto it = agents_.find(id);
  return it == agents_.end() ? nullptr : &it->second;
}

}  // namespace cerebro
