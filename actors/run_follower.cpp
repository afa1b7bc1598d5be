#include "actors/run_follower.hpp"

#include <chrono>

#include <fmt/format.h>

#include "runtime/api/pareto_view.hpp"
#include "runtime/run/objectives.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/search/search_registry.hpp"
#include "actors/actors.hpp"
#include "actors/experiment_steering.hpp"
#include "actors/shard_placer.hpp"
#include "runtime/base/log_lines.hpp"

namespace cerebro {

namespace {

// The agents of a running experiment and the scheduler's ids of their
// workers (ids are never reused, so a late message names one worker).
struct LiveCluster {
  explicit LiveCluster(const std::vector<ClusterView::Agent>& initial) {
    for (const auto& a : initial) agents[a.name] = a;
  }
  WorkerId add_worker(const std::string& agent) {
    agent_of[next_worker] = agent;
    return next_worker++;
  }
  std::vector<WorkerId> workers_of(const std::string& agent) const {
    std::vector<WorkerId> out;
    for (const auto& [id, name] : agent_of)
      if (name == agent) out.push_back(id);
    return out;
  }
  void forget(const std::string& agent) {
    for (auto it = agent_of.begin(); it != agent_of.end();) it = it->second == agent ? agent_of.erase(it) : std::next(it);
  }
  // The workers of the live agents (a respawned worker replaces its dead one).
  int worker_count() const {
    size_t n = 0;
    for (const auto& [name, agent] : agents) n += agent.workers.size();
    return static_cast<int>(n);
  }
  std::map<std::string, ClusterView::Agent> agents;
  std::map<WorkerId, std::string> agent_of;
  WorkerId next_worker = 0;
};

// Everything training needs once the run's store is open: for a new run after

}  // namespace

// Trains until every config is done: places the shards, starts the
// scheduler and follows it. Blocks the calling thread.
Result<experiment_done> train(caf::actor_system& system, const RunOptions& options, const ClusterView& cluster,
                              Prepared& r, const RunObserver& observer, const Say& say) {
  const auto& s = r.setup;
  caf::scoped_actor self(system);
  int agents = static_cast<int>(cluster.agents.size());
  int replication = r.spec.cluster.replication > 0 ? r.spec.cluster.replication : std::min(2, agents);
  ShardPlacer placer(self, options.experiment_id, s.data.manifest, s.data_dir, replication);
  auto shards = placer.place_all(cluster);
  if (!shards.ok()) return shards.status();
  if (agents > 1)
    say(fmt::format("placed {} partitions on {} agents with replication {}", s.partitions, agents,
                    std::min(replication, agents)));
  LiveCluster live(cluster.agents);
  scheduler_config sc;
  sc.control = r.control;
  sc.experiment = options.experiment_id;
  sc.shape = s.shape;
  sc.augmentation = s.augmentation;
  sc.read_ahead = r.spec.data.read_ahead;
  sc.params_json = r.params_json;
  sc.create_config = [&r](ConfigId id, const nlohmann::json& params) { return create_config(r, id, params); };
  sc.checkpoint = spawn_checkpoint(system, r.store);
  for (size_t a = 0; a < cluster.agents.size(); ++a) {
    for (const auto& worker : cluster.agents[a].workers) {
      auto id = live.add_worker(cluster.agents[a].name);
      sc.workers.emplace_back(id, worker);
      r.control->add_worker(id, (*shards)[a]);
    }
  }
  r.live_workers->store(live.worker_count());
  // Issue 14: on a cluster no worker can join (embedded), a pipeline config
  // with more stages than it has workers fails instead of waiting for ever
  // (ExperimentControl::set_fixed_workers); elsewhere it waits, said once.
  if (cluster.fixed && !sc.workers.empty()) r.control->set_fixed_workers(static_cast<int32_t>(sc.workers.size()));
  // Issue 14: a gang larger than the workers holding partitions cannot form.
  if (auto size = check_gang_size(r.spec.cluster, static_cast<int>(sc.workers.size())); !size.ok()) return size;
  sc.gang_timeout_s = r.spec.cluster.heartbeat_timeout;
  sc.listener = caf::actor_cast<scheduler_listener_actor>(self);
  for (const auto& e : r.store->unit_log()) sc.clock_offset_s = std::max(sc.clock_offset_s, e.end_s);
  for (const auto& e : r.store->rolled_back_units()) sc.clock_offset_s = std::max(sc.clock_offset_s, e.end_s);
  // TensorBoard follows the run: the logs are written again from the whole
  // log (a resumed or recovered run), then appended to at each validation.
  double now_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto tensorboard = LiveTensorBoard::start(options.out_dir, TensorBoardClock{now_s - sc.clock_offset_s, host_name()});
  r.tensorboard = nullptr;
  if (tensorboard.ok()) r.tensorboard = std::move(tensorboard).value();
  else say("the TensorBoard logs will be written at the end only: " + tensorboard.error());
  auto log_to_tensorboard = [&] {
    if (!r.tensorboard || r.tensorboard->failed()) return;
    if (auto st = r.tensorboard->update(*r.store); !st.ok())
      say("the TensorBoard logs will be written at the end only: " + st.message());
  };
  log_to_tensorboard();
  auto scheduler = spawn_scheduler(system, sc);
  ConfigId next_config = 0;
  for (const auto& c : r.store->configs()) next_config = std::max(next_config, c.id + 1);
  ExperimentSteering steering(SteeringContext{r.store, scheduler, s.shape, s.data.partitions.at(0), s.data.validation,
                                              r.spec.epochs, r.spec.seed,
                                              search_info(r.spec.search).takes_added_configs,
                                              options.out_dir, next_config, [&r] { return pipeline_limits_of(r); },
                                              has_objective(r.spec, BuiltinObjective::parameters)});
  self->send(scheduler, start_atom::value);
  if (observer.started) observer.started(caf::actor_cast<run_follower_actor>(self));
  // An agent is gone (dead or hung): its workers leave the schedule, and a
  // partition that no live agent holds any more is placed again, from the
  // prepared copy here, on the live agent holding the fewest partitions.
  // `name` by value: callers pass a key of live.agents, which is erased below
  // (a reference to it dangled, and only glibc's leaving freed memory as it
  // was hid that; tcmalloc reuses it at once, and the run then never placed
  // the lost partition again).
  auto lose_agent = [&](std::string name, const std::string& why) {
    auto it = live.agents.find(name);
    if (it == live.agents.end()) return;
    live.agents.erase(it);
    for (auto id : live.workers_of(name)) self->send(scheduler, remove_worker_atom::value, id);
    live.forget(name);
    r.live_workers->store(live.worker_count());
    placer.forget(name);
    say(fmt::format("agent {} is lost ({}); its units go back to the queue", name, why));
    for (const auto& r : placer.place_orphans(live.agents)) {
      if (!r.error.empty()) say(fmt::format("partition {} could not be placed again: {}", r.partition, r.error));
      if (r.agent.empty()) {
        say(fmt::format("partition {} has no live replica; waiting for an agent to join", r.partition));
      } else {
        say(fmt::format("partition {} lost its last replica; placed again on agent {}", r.partition, r.agent));
        for (auto id : live.workers_of(r.agent))
          self->send(scheduler, holds_atom::value, id, placer.held_by(r.agent));
      }
    }
  };
  for (const auto& [name, agent] : live.agents) self->monitor(agent.agent);
  experiment_done done;
  bool running = true;
  self->receive_while(running)(
      [&](progress_atom, progress_update& p) {
        p.running_agents.clear();
        for (auto id : p.running_workers) {
          auto it = live.agent_of.find(id);
          p.running_agents.push_back(it == live.agent_of.end() ? std::string("?") : it->second);
        }
        // Several objectives: the front so far travels with the progress (the REPL's wait shows it).
        if (r.spec.objectives.size() >= 2) p.pareto_json = api::pareto_of(*r.store).dump();
        if (observer.progress) observer.progress(p);
        log_to_tensorboard();
      },
      [&](join_atom, const std::string& name, const agent_actor& agent, const std::vector<worker_actor>& workers) {
        // Elastic join (or a lost agent back): the node gets replicas, then
        // its workers take units.
        if (live.agents.count(name)) lose_agent(name, "it joined again");
        ClusterView::Agent joining{name, agent, workers};
        live.agents[name] = joining;
        self->monitor(agent);
        auto held = placer.place_joining(joining, live.agents.size());
        if (!held.ok()) {
          // It takes no part in this run: no units, no replica of a lost
          // partition, and its workers do not count for plans (steering's
          // pipeline stages). What it took before the failure is forgotten;
          // if it joins again it is tried again.
          live.agents.erase(name);
          placer.forget(name);
          self->demonitor(agent.address());
          say(fmt::format("agent {} joined but could not take partitions, so it takes no part in this run: {}", name,
                          held.error()));
          return;
        }
        say(fmt::format("agent {} joined mid-run: holds partitions {}", name, fmt::join(*held, ", ")));
        for (const auto& worker : workers)
          self->send(scheduler, add_worker_atom::value, live.add_worker(name), worker, *held);
        r.live_workers->store(live.worker_count());
      },
      [&](agent_lost_atom, const std::string& name) { lose_agent(name, "it is dead or stopped answering"); },
      [&](caf::down_msg& down) {
        for (const auto& [name, agent] : live.agents)
          if (agent.agent.address() == down.source) return lose_agent(name, "it is gone: " + caf::to_string(down.reason));
      },
      [&](worker_lost_atom, WorkerId id, const worker_actor& worker) {
        // A worker died on its own: the node's agent supervises its workers
        // and replaces it. Asked at once (the scheduler sends this only while
        // the node is reachable), so the respawn never depends on how soon
        // the run would end without it.
        auto owner = live.agent_of.find(id);
        if (owner == live.agent_of.end() || !live.agents.count(owner->second)) return;
        auto name = owner->second;
        // By actor id: the dead worker's handle cannot be rebuilt on its node
        // (CAF forgets a dead actor), its id names it there.
        self->request(live.agents[name].agent, std::chrono::seconds(10), respawn_atom::value, worker.id())
            .receive(
                [&](const worker_actor& fresh) {
                  auto fresh_id = live.add_worker(name);
                  say(fmt::format("agent {} respawned worker {} as worker {}", name, id, fresh_id));
                  self->send(scheduler, add_worker_atom::value, fresh_id, fresh, placer.held_by(name));
                },
                [&](const caf::error& e) {
                  say(fmt::format("agent {} could not respawn worker {}: {}", name, id, self->system().render(e)));
                });
      },
      [&](control_atom, const control_request& request) {
        // Steering by hand (the REPL, through the gateway): see experiment_steering.hpp.
        auto promise = self->make_response_promise<control_reply>();
        auto reply = steering.handle(self.ptr(), request);
        if (reply.ok()) {
          reply->experiment = request.experiment;
          promise.deliver(std::move(reply).value());
        } else {
          // With its code: the HTTP API answers not_found with 404, invalid_argument with 400.
          promise.deliver(make_error(reply.code(), reply.error()));
        }
      },
      [&](done_atom, const experiment_done& d) {
        done = d;
        running = false;
      });
  for (const auto& [name, agent] : live.agents) self->send(agent.agent, release_atom::value, options.experiment_id);
  self->send_exit(sc.checkpoint, caf::exit_reason::user_shutdown);
  if (!done.error.empty() && !done.damaged_state) return Status::error("the experiment stopped: " + done.error);
  return done;
}

}  // namespace cerebro
