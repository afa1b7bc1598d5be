// The run follower (run_follower_actor) and train(), which spawns it and
// waits for its outcome. The follower places the shards, starts the
// scheduler, follows it as its listener, takes the coordinator's news of
// agents joining and lost (actors/run_follower_cluster.cpp) and answers
// steering requests (actors/experiment_steering.hpp).
#include "actors/run_follower.hpp"

#include <chrono>
#include <type_traits>

#include <fmt/format.h>

#include "actors/run_follower_shell.hpp"
#include "runtime/api/pareto_view.hpp"
#include "runtime/base/log_lines.hpp"
#include "runtime/net/error_category.hpp"
#include "runtime/run/objectives.hpp"
#include "runtime/spec/search_registry.hpp"

namespace cerebro {

namespace follower_detail {

namespace {

// The shards are placed: the scheduler starts with the agents' workers.
void launch(follower_ptr self) {
  auto& st = self->state;
  adopt_start(self);
  const auto agents = static_cast<int>(st.config.cluster.agents.size());
  if (agents > 1)
    st.say(fmt::format("placed {} partitions on {} agents with replication {}", st.config.partitions, agents,
                       std::min(st.config.replication, agents)));
  st.config.scheduler.listener = caf::actor_cast<scheduler_listener_actor>(self);
  st.scheduler = spawn_scheduler(self->system(), st.config.scheduler);
  // A scheduler that stops without its done (a bug: an exception in it) ends
  // the run instead of leaving it waiting for ever.
  self->monitor(st.scheduler);
  self->send(st.scheduler, start_atom::value);
}

caf::result<bool> start(follower_ptr self) {
  auto promise = self->make_response_promise<bool>();
  place_start(self, 0, [self, promise](Status placed) mutable {
    if (!placed.ok()) {
      promise.deliver(to_error(placed));
      return self->quit();
    }
    launch(self);
    promise.deliver(true);
  });
  return promise;
}

// The run is over: the agents drop its shards, and train() hears the outcome.
void ended(follower_ptr self, const experiment_done& done) {
  auto& st = self->state;
  if (st.outcome) return;
  st.outcome = done;
  for (const auto& [name, agent] : st.agents)
    self->send(agent.agent, release_atom::value, st.config.scheduler.experiment);
  if (st.awaited) {
    st.awaited->deliver(done);
    self->quit();
  }
}

// The scheduler stopped (after its done, or without one), or an agent is gone.
void on_down(follower_ptr self, const caf::down_msg& down) {
  if (down.source == self->state.scheduler.address()) {
    if (!self->state.outcome)
      ended(self, experiment_done{0, 0, "the scheduler stopped: " + caf::to_string(down.reason)});
    return;
  }
  auto why = "it is gone: " + caf::to_string(down.reason);
  begin_change(self, [self, source = down.source, why](Then then) { lose_agent_at(self, source, why, then); });
}

caf::result<experiment_done> await_end(follower_ptr self) {
  auto promise = self->make_response_promise<experiment_done>();
  if (self->state.outcome) {
    promise.deliver(*self->state.outcome);
    self->quit();
  } else {
    self->state.awaited = promise;
  }
  return promise;
}

void progress(follower_ptr self, progress_update& p) {
  p.running_agents.clear();
  for (auto id : p.running_workers) p.running_agents.push_back(self->state.cluster->agent_of(id));
  if (self->state.config.progress) self->state.config.progress(p);
}

// Steering by hand (the REPL, through the gateway): prepared here, applied
// by the scheduler. Errors keep their codes: the HTTP API answers not_found
// with 404, invalid_argument with 400.
caf::result<control_reply> steer(follower_ptr self, const control_request& request) {
  auto& steering = self->state.config.steering;
  if (!steering) return make_error(StatusCode::failed_precondition, "this run takes no steering");
  auto plan = steering->plan(request);
  if (!plan.ok()) return to_error(plan.status());
  if (!plan->change) {
    plan->reply.experiment = request.experiment;
    return std::move(plan->reply);
  }
  auto promise = self->make_response_promise<control_reply>();
  const ScheduleChange change = *plan->change;
  auto answer = [self, promise, change, experiment = request.experiment](const Status& applied) mutable {
    auto reply = self->state.config.steering->finish(change, applied);
    if (!reply.ok()) {
      promise.deliver(to_error(reply.status()));
      return;
    }
    reply->experiment = experiment;
    promise.deliver(std::move(reply).value());
  };
  self->request(self->state.scheduler, std::chrono::seconds(30), control_atom::value, change.command, change.config,
                change.params_json, change.epochs, change.cloned_from, change.stages)
      .then([answer](bool) mutable { answer(Status()); },
            [answer](const caf::error& e) mutable { answer(to_status(e)); });
  return promise;
}

}  // namespace

}  // namespace follower_detail

run_follower_actor::behavior_type run_follower(follower_detail::follower_ptr self, follower_config config) {
  using namespace follower_detail;
  self->state.cluster.emplace(config.partitions, config.replication);
  self->state.config = std::move(config);
  self->set_down_handler([self](caf::down_msg& down) { on_down(self, down); });
  return {
      [self](start_atom) { return start(self); },
      [self](done_atom) { return await_end(self); },
      [self](progress_atom, progress_update& p) { progress(self, p); },
      [self](done_atom, const experiment_done& done) { ended(self, done); },
      [self](join_atom, const std::string& name, const agent_actor& agent, const std::vector<worker_actor>& workers) {
        ClusterView::Agent joining{name, agent, workers};
        begin_change(self, [self, joining](Then then) { join_agent(self, joining, then); });
      },
      [self](agent_lost_atom, const std::string& name) {
        begin_change(self,
                     [self, name](Then then) { lose_agent(self, name, "it is dead or stopped answering", then); });
      },
      [self](worker_lost_atom, WorkerId id, const worker_actor& worker) {
        begin_change(self, [self, id, worker](Then then) { respawn(self, id, worker, then); });
      },
      [self](control_atom, const control_request& request) { return steer(self, request); },
  };
}

// Trains until every config is done: the follower places the shards, starts
// the scheduler and follows it, on its own thread; this one waits for it.
Result<experiment_done> train(caf::actor_system& system, const RunOptions& options, const ClusterView& cluster,
                              Prepared& r, const RunObserver& observer, const Say& say) {
  const auto& s = r.setup;
  const int workers = cluster.total_workers();
  // On a cluster no worker can join (embedded), a pipeline config with more
  // stages than it has workers fails instead of waiting for ever
  // (ExperimentControl::set_fixed_workers); elsewhere it waits, said once.
  if (cluster.fixed && workers > 0) r.control->set_fixed_workers(workers);
  // A gang larger than the workers holding partitions cannot form.
  if (auto size = check_gang_size(r.spec.cluster, workers); !size.ok()) return size;
  follower_config fc;
  fc.cluster = cluster;
  fc.partitions = static_cast<int>(s.data.manifest.partitions.size());
  fc.replication = LiveCluster::replication_for(r.spec.cluster.replication, static_cast<int>(cluster.agents.size()));
  auto source = spawn_shard_server(system, options.experiment_id, s.data_dir, ShardPlacer::files_of(s.data.manifest));
  fc.placer = ShardPlacer(options.experiment_id, s.data.manifest, s.data_dir, source);
  auto& sc = fc.scheduler;
  sc.control = r.control;
  sc.experiment = options.experiment_id;
  sc.shape = s.shape;
  sc.augmentation = s.augmentation;
  sc.read_ahead = r.spec.data.read_ahead;
  sc.params_json = r.params_json;
  sc.create_config = [&r](ConfigId id, const nlohmann::json& params) { return create_config(r, id, params); };
  sc.checkpoint = spawn_checkpoint(system, r.store);
  sc.gang_timeout_s = r.spec.cluster.heartbeat_timeout;
  for (const auto& e : r.store->unit_log()) sc.clock_offset_s = std::max(sc.clock_offset_s, e.end_s);
  for (const auto& e : r.store->rolled_back_units()) sc.clock_offset_s = std::max(sc.clock_offset_s, e.end_s);
  // TensorBoard follows the run: the logs are written again from the whole
  // log (a resumed or recovered run), then appended to at each validation.
  double now_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto tensorboard = LiveTensorBoard::start(options.out_dir, TensorBoardClock{now_s - sc.clock_offset_s, host_name()});
  r.tensorboard = nullptr;
  if (tensorboard.ok())
    r.tensorboard = std::move(tensorboard).value();
  else
    say("the TensorBoard logs will be written at the end only: " + tensorboard.error());
  auto log_to_tensorboard = [&r, say] {
    if (!r.tensorboard || r.tensorboard->failed()) return;
    if (auto st = r.tensorboard->update(*r.store); !st.ok())
      say("the TensorBoard logs will be written at the end only: " + st.message());
  };
  log_to_tensorboard();
  ConfigId next_config = 0;
  for (const auto& c : r.store->configs()) next_config = std::max(next_config, c.id + 1);
  fc.steering = std::make_shared<ExperimentSteering>(
      SteeringContext{r.store, s.shape, s.data.partitions.at(0), s.data.validation, r.spec.epochs, r.spec.seed,
                      search_info(r.spec.search).takes_added_configs, options.out_dir, next_config,
                      [&r] { return pipeline_limits_of(r); }, has_objective(r.spec, BuiltinObjective::parameters)});
  fc.live_workers = r.live_workers;
  fc.say = say;
  // Several objectives: the front so far travels with the progress (the REPL's wait shows it).
  fc.progress = [&r, &observer, log_to_tensorboard](progress_update& p) {
    if (r.spec.objectives.size() >= 2) p.pareto_json = api::pareto_of(*r.store).dump();
    if (observer.progress) observer.progress(p);
    log_to_tensorboard();
  };
  auto checkpoint = sc.checkpoint;
  // Detached: steering reads the store, exports models and runs pilot checks.
  auto follower = system.spawn<caf::detached>(run_follower, std::move(fc));
  caf::scoped_actor self(system);
  self->monitor(follower);
  Status failure;
  experiment_done done;
  self->request(follower, caf::infinite, start_atom::value)
      .receive([](bool) {}, [&](const caf::error& e) { failure = to_status(e); });
  if (failure.ok()) {
    if (observer.started) observer.started(follower);
    self->request(follower, caf::infinite, done_atom::value)
        .receive([&](experiment_done& d) { done = std::move(d); },
                 [&](const caf::error& e) { failure = to_status(e); });
  }
  // Nothing of the follower runs once it is down: what it used here is ours again.
  self->receive([](const caf::down_msg&) {});
  self->send_exit(checkpoint, caf::exit_reason::user_shutdown);
  self->send_exit(source, caf::exit_reason::user_shutdown);
  if (!failure.ok()) return failure;
  if (!done.error.empty() && !done.damaged_state) return Status::unavailable("the experiment stopped: " + done.error);
  return done;
}

}  // namespace cerebro
