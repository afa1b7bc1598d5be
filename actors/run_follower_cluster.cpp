// The run follower's changes of the cluster, carried out as LiveCluster
// decides: the start's placement, an agent that joins mid-run (its replicas
// placed before its workers take units), an agent lost (its workers leave
// the schedule, its orphaned partitions are placed again), a worker
// respawned by its agent.
#include <chrono>

#include <fmt/format.h>

#include "actors/run_follower_shell.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro::follower_detail {

namespace {

void end_change(follower_ptr self) {
  self->state.changing = false;
  if (self->state.waiting.empty()) return;
  auto next = std::move(self->state.waiting.front());
  self->state.waiting.pop_front();
  begin_change(self, std::move(next));
}

void count_workers(follower_ptr self) { self->state.config.live_workers->store(self->state.cluster->worker_count()); }

// What became of an orphan: said, and the workers of the agent that took it
// hold it from now on.
void replaced(follower_ptr self, const LiveCluster::Replacement& r) {
  auto& cluster = *self->state.cluster;
  if (!r.error.empty())
    self->state.say(fmt::format("partition {} could not be placed again: {}", r.partition, r.error));
  if (r.agent.empty()) {
    self->state.say(fmt::format("partition {} has no live replica; waiting for an agent to join", r.partition));
    return;
  }
  self->state.say(fmt::format("partition {} lost its last replica; placed again on agent {}", r.partition, r.agent));
  for (auto id : cluster.workers_of(r.agent))
    self->send(self->state.scheduler, holds_atom::value, id, cluster.held_by(r.agent));
}

// Places the orphans again, one placement at a time, from the prepared copy.
void repair(follower_ptr self, Then then) {
  auto& cluster = *self->state.cluster;
  auto attempt = cluster.next_repair();
  for (const auto& r : cluster.take_repaired()) replaced(self, r);
  if (!attempt) return then();
  self->state.config.placer.place(self, self->state.agents.at(attempt->agent), {attempt->partition}, false,
                                  [self, attempt = *attempt, then](Status placed) {
                                    self->state.cluster->repair_tried(attempt, placed);
                                    repair(self, then);
                                  });
}

}  // namespace

void begin_change(follower_ptr self, Change change) {
  if (self->state.changing) {
    self->state.waiting.push_back(std::move(change));
    return;
  }
  self->state.changing = true;
  change([self] { end_change(self); });
}

void place_start(follower_ptr self, size_t agent, std::function<void(Status)> done) {
  const auto& agents = self->state.config.cluster.agents;
  if (agent == agents.size()) return done(Status());
  auto holds = self->state.cluster->initial_placement(agents.size());
  self->state.config.placer.place(self, agents[agent], holds[agent], true, [self, agent, done](Status placed) {
    if (!placed.ok()) return done(placed);
    place_start(self, agent + 1, done);
  });
}

void adopt_start(follower_ptr self) {
  auto& st = self->state;
  const auto& agents = st.config.cluster.agents;
  auto holds = st.cluster->initial_placement(agents.size());
  for (size_t a = 0; a < agents.size(); ++a) {
    auto ids = st.cluster->add_agent(agents[a].name, holds[a], static_cast<int>(agents[a].workers.size()));
    for (size_t i = 0; i < ids.size(); ++i) {
      st.config.scheduler.workers.emplace_back(ids[i], agents[a].workers[i]);
      st.config.scheduler.control->add_worker(ids[i], holds[a]);
    }
    st.agents[agents[a].name] = agents[a];
    self->monitor(agents[a].agent);
  }
  count_workers(self);
}

// Elastic join (or a lost agent back): the node gets replicas, then its
// workers take units. If its placement fails it takes no part in this run:
// no units, no replica of a lost partition, and its workers do not count for
// plans (steering's pipeline stages); if it joins again it is tried again.
void join_agent(follower_ptr self, const ClusterView::Agent& agent, Then then) {
  auto& cluster = *self->state.cluster;
  if (cluster.live(agent.name) || cluster.joining(agent.name))
    return lose_agent(self, agent.name, "it joined again", [self, agent, then] { join_agent(self, agent, then); });
  auto share = cluster.begin_join(agent.name, static_cast<int>(agent.workers.size()));
  self->state.agents[agent.name] = agent;
  self->monitor(agent.agent);
  self->state.config.placer.place(self, agent, share, true, [self, agent, share, then](Status placed) {
    auto& live = *self->state.cluster;
    if (!placed.ok()) {
      live.join_failed(agent.name);
      self->state.agents.erase(agent.name);
      self->demonitor(agent.agent.address());
      self->state.say(fmt::format("agent {} joined but could not take partitions, so it takes no part in this run: {}",
                                  agent.name, placed.message()));
      return then();
    }
    auto ids = live.joined(agent.name);
    self->state.say(fmt::format("agent {} joined mid-run: holds partitions {}", agent.name, fmt::join(share, ", ")));
    for (size_t i = 0; i < ids.size(); ++i)
      self->send(self->state.scheduler, add_worker_atom::value, ids[i], agent.workers[i], share);
    count_workers(self);
    then();
  });
}

// An agent is gone (dead or hung): its workers leave the schedule, and a
// partition that no live agent holds any more is placed again, from the
// prepared copy here, on the live agent holding the fewest partitions.
// `name` by value: callers may pass a key of the agents' table, which is
// erased here.
void lose_agent(follower_ptr self, std::string name, const std::string& why, Then then) {
  auto& cluster = *self->state.cluster;
  auto loss = cluster.lose(name);
  if (!loss) return then();
  self->state.agents.erase(name);
  for (auto id : loss->workers) self->send(self->state.scheduler, remove_worker_atom::value, id);
  count_workers(self);
  self->state.say(fmt::format("agent {} is lost ({}); its units go back to the queue", name, why));
  repair(self, then);
}

// The agent whose handle has that address, if it is still ours: a down
// message names the agent's actor, and the name may belong to a newer
// incarnation by the time it is handled.
void lose_agent_at(follower_ptr self, const caf::actor_addr& source, const std::string& why, Then then) {
  for (const auto& [name, agent] : self->state.agents)
    if (agent.agent.address() == source) return lose_agent(self, name, why, then);
  then();
}

// A worker died on its own: the node's agent supervises its workers and
// replaces it. Asked at once (the scheduler reports it only while the node
// is reachable), so the respawn never depends on how soon the run would end
// without it. By actor id: the dead worker's handle cannot be rebuilt on its
// node (CAF forgets a dead actor), its id names it there.
void respawn(follower_ptr self, WorkerId id, const worker_actor& worker, Then then) {
  auto name = self->state.cluster->respawner(id);
  if (!name) return then();
  self->request(self->state.agents.at(*name).agent, std::chrono::seconds(10), respawn_atom::value, worker.id())
      .then(
          [self, id, name = *name, then](const worker_actor& fresh) {
            auto fresh_id = self->state.cluster->respawned(name);
            if (fresh_id) {
              self->state.say(fmt::format("agent {} respawned worker {} as worker {}", name, id, *fresh_id));
              self->send(self->state.scheduler, add_worker_atom::value, *fresh_id, fresh,
                         self->state.cluster->held_by(name));
            }
            then();
          },
          [self, id, name = *name, then](const caf::error& e) {
            self->state.say(
                fmt::format("agent {} could not respawn worker {}: {}", name, id, self->system().render(e)));
            then();
          });
}

}  // namespace cerebro::follower_detail
