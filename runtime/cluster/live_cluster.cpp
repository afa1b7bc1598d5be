#include "runtime/cluster/live_cluster.hpp"

#include <algorithm>

namespace cerebro {

LiveCluster::LiveCluster(int partitions, int replication) : layout_(partitions, replication) {}

int LiveCluster::replication_for(int spec_replication, int agents) {
  return spec_replication > 0 ? spec_replication : std::min(2, agents);
}

WorkerId LiveCluster::add_worker(const std::string& agent) {
  agent_of_[next_worker_] = agent;
  return next_worker_++;
}

std::vector<WorkerId> LiveCluster::add_agent(const std::string& name, const std::vector<PartitionId>& partitions,
                                             int workers) {
  for (auto p : partitions) layout_.placed(name, p);
  agents_[name] = Agent{workers, true, partitions};
  std::vector<WorkerId> ids;
  for (int i = 0; i < workers; ++i) ids.push_back(add_worker(name));
  return ids;
}

std::vector<PartitionId> LiveCluster::begin_join(const std::string& name, int workers) {
  Agent& agent = agents_[name];
  agent = Agent{workers, false, {}};
  agent.share = layout_.share_for_joining(agents_.size());
  return agent.share;
}

std::vector<WorkerId> LiveCluster::joined(const std::string& name) {
  auto it = agents_.find(name);
  if (it == agents_.end() || it->second.joined) return {};
  it->second.joined = true;
  for (auto p : it->second.share) layout_.placed(name, p);
  std::vector<WorkerId> ids;
  for (int i = 0; i < it->second.workers; ++i) ids.push_back(add_worker(name));
  return ids;
}

void LiveCluster::join_failed(const std::string& name) {
  auto it = agents_.find(name);
  if (it == agents_.end() || it->second.joined) return;
  agents_.erase(it);
  layout_.forget(name);
}

std::optional<LiveCluster::Loss> LiveCluster::lose(const std::string& name) {
  auto it = agents_.find(name);
  if (it == agents_.end()) return std::nullopt;
  Loss loss;
  loss.workers = workers_of(name);
  for (auto w : loss.workers) agent_of_.erase(w);
  agents_.erase(it);
  layout_.forget(name);
  loss.orphans = layout_.orphans();
  for (auto p : loss.orphans)
    if (std::find(orphans_.begin(), orphans_.end(), p) == orphans_.end()) orphans_.push_back(p);
  return loss;
}

std::optional<LiveCluster::PlacementTry> LiveCluster::next_repair() {
  while (!orphans_.empty()) {
    std::vector<std::string> candidates;
    for (const auto& name : live_agents())
      if (!tried_.count(name)) candidates.push_back(name);
    if (!candidates.empty()) return PlacementTry{orphans_.front(), layout_.emptiest(candidates)};
    // No live agent is left to try: it waits for one to join.
    repaired_.push_back(Replacement{orphans_.front(), {}, repair_error_});
    orphans_.pop_front();
    tried_.clear();
    repair_error_.clear();
  }
  return std::nullopt;
}

void LiveCluster::repair_tried(const PlacementTry& attempt, const Status& result) {
  if (orphans_.empty() || orphans_.front() != attempt.partition) return;
  if (!result.ok()) {
    // An agent that cannot take it (its disk full, its cache unwritable) must
    // not leave the partition without a holder while another could.
    repair_error_ += (repair_error_.empty() ? "" : "; ") + result.message();
    tried_.insert(attempt.agent);
    return;
  }
  if (live(attempt.agent)) layout_.placed(attempt.agent, attempt.partition);
  repaired_.push_back(Replacement{attempt.partition, attempt.agent, repair_error_});
  orphans_.pop_front();
  tried_.clear();
  repair_error_.clear();
}

std::vector<LiveCluster::Replacement> LiveCluster::take_repaired() {
  std::vector<Replacement> out;
  out.swap(repaired_);
  return out;
}

std::optional<std::string> LiveCluster::respawner(WorkerId dead) const {
  auto it = agent_of_.find(dead);
  if (it == agent_of_.end() || !live(it->second)) return std::nullopt;
  return it->second;
}

std::optional<WorkerId> LiveCluster::respawned(const std::string& name) {
  if (!live(name)) return std::nullopt;
  return add_worker(name);
}

bool LiveCluster::live(const std::string& name) const {
  auto it = agents_.find(name);
  return it != agents_.end() && it->second.joined;
}

bool LiveCluster::joining(const std::string& name) const {
  auto it = agents_.find(name);
  return it != agents_.end() && !it->second.joined;
}

std::vector<std::string> LiveCluster::live_agents() const {
  std::vector<std::string> out;
  for (const auto& [name, agent] : agents_)
    if (agent.joined) out.push_back(name);
  return out;
}

std::string LiveCluster::agent_of(WorkerId id) const {
  auto it = agent_of_.find(id);
  return it == agent_of_.end() ? std::string("?") : it->second;
}

std::vector<WorkerId> LiveCluster::workers_of(const std::string& name) const {
  std::vector<WorkerId> out;
  for (const auto& [id, agent] : agent_of_)
    if (agent == name) out.push_back(id);
  return out;
}

int LiveCluster::worker_count() const {
  int n = 0;
  for (const auto& [name, agent] : agents_)
    if (agent.joined) n += agent.workers;
  return n;
}

}  // namespace cerebro
