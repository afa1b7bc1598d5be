#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro {

namespace {

using Clock = std::chrono::steady_clock;

// The answers of a data-parallel gang's members as they come in (issue 14).
struct GangReplies {
  GangDispatch gang;
  double start_s = 0;
  std::vector<std::optional<gang_result>> results;  // good answers, by rank
  std::vector<bool> replied;                        // any answer, by rank
  bool failed = false;
};
using SharedGang = std::shared_ptr<GangReplies>;

struct scheduler_state {
  scheduler_config config;
  std::map<caf::actor_addr, WorkerId> worker_ids;
  std::map<WorkerId, worker_actor> workers;
  Clock::time_point started;
  bool finished = false;
  double unit_span_s = 0;  // dispatch to durable acknowledgement, committed units
  // Workers whose unit's result is being made durable. A worker lost
  // meanwhile leaves the book only once the commit answers: its unit, durable
  // by then, must not go back to the queue (it would commit twice), and the
  // book must still know the worker when the commit counts it.
  std::set<WorkerId> committing;
  std::map<WorkerId, std::pair<std::string, bool>> leaving;  // why, whether its unit failed
  // Where data-parallel gangs meet (issue 14); spawned with the scheduler.
  rendezvous_actor board;
  std::map<int64_t, SharedGang> gangs;  // running gang attempts by id
  // Members of a failed gang that have not answered yet: still inside the
  // attempt (Gloo waits for the dead peer until the timeout), so out of the
  // schedule until they answer, with the partitions they hold.
  std::map<WorkerId, std::vector<PartitionId>> draining;
  static inline const char* name = "cerebro.scheduler";

  double elapsed() const {
    return config.clock_offset_s + std::chrono::duration<double>(Clock::now() - started).count();
  }
};

using scheduler_ptr = scheduler_actor::stateful_pointer<scheduler_state>;

void report(scheduler_ptr self, const std::string& event) {
  auto p = self->state.config.control->progress(self->state.elapsed());
  p.event = event;
  self->send(self->state.config.listener, progress_atom::value, std::move(p));
}

void finish_if_done(scheduler_ptr self) {
  if (self->state.finished || !self->state.config.control->all_done()) return;
  self->state.finished = true;
  self->send(self->state.config.listener, done_atom::value, experiment_done{self->state.elapsed(), self->state.unit_span_s, ""});
  self->quit();
}

void dispatch(scheduler_ptr self);

// Persists the search procedure's decisions and carries out its state copies
// (PBT): a copied-into config is dispatched only after its copy is durable.
void apply_search(scheduler_ptr self) {
  auto& control = *self->state.config.control;
  // Configs the search proposed (tpe): durable before they are scheduled. A
  // rejected one frees its slot, and the search may propose again.
  for (auto proposals = control.take_proposals(); !proposals.empty(); proposals = control.take_proposals()) {
    for (const auto& p : proposals) {
      auto& create = self->state.config.create_config;
      Status made = create ? create(p.config, p.params) : Status::error("this run cannot create configs");
      if (made.ok()) {
        self->state.config.params_json[p.config] = p.params.dump();
        control.on_config_created(p.config);
        report(self, fmt::format("config {} proposed by {} ({}): {}", p.config, control.search().name(), p.reason,
                                 describe_params(p.params)));
      } else {
        report(self, control.on_config_rejected(p.config, made.message()));
      }
    }
  }
  for (const auto& d : control.take_decisions())
    self->request(self->state.config.checkpoint, caf::infinite, decision_atom::value, d)
        .then([](bool) {}, [self](const caf::error& e) { report(self, "cannot record a decision: " + caf::to_string(e)); });
  for (const auto& copy : control.take_state_copies()) {
    auto params = copy.params.dump();
    self->request(self->state.config.checkpoint, caf::infinite, copy_atom::value,
                  state_copy{copy.from, copy.from_epoch, copy.to, params})
        .then(
            [self, copy, params](bool) {
              self->state.config.params_json[copy.to] = params;
              report(self, self->state.config.control->on_state_copied(copy.to));
              apply_search(self);
              dispatch(self);
            },
            [self, copy](const caf::error& e) {
              report(self, self->state.config.control->on_state_copy_failed(copy.to, caf::to_string(e)));
              apply_search(self);
              dispatch(self);
            });
  }
}

// Is `d` still what its worker runs? Not once the worker was lost: its unit
// went back to the queue (and may run elsewhere).
bool still_running(scheduler_ptr self, const Dispatch& d) {
  const auto& book = self->state.config.control->book();
  auto running = book.has_worker(d.worker) ? book.running_on(d.worker) : std::nullopt;
  return self->state.workers.count(d.worker) && running && *running == d.unit;
}

void leave_book(scheduler_ptr self, WorkerId id, const std::string& why, bool unit_failed);

// After a commit answered: a worker lost while it was in flight leaves now.
// Returns whether it did (leave_book dispatches).
bool finish_leaving(scheduler_ptr self, WorkerId id) {
  auto it = self->state.leaving.find(id);
  if (it == self->state.leaving.end()) return false;
  auto [why, unit_failed] = it->second;
  self->state.leaving.erase(it);
  leave_book(self, id, why, unit_failed);
  return true;
}

// The unit's result is in: make it durable, then count it.
void on_result(scheduler_ptr self, const Dispatch& d, double start_s, unit_result r) {
  auto& control = *self->state.config.control;
  // A worker dropped as lost (hung) may still answer later: its unit went
  // back to the queue and may have run elsewhere, so the late result must not
  // count (a unit commits once).
  if (!still_running(self, d)) {
    report(self, fmt::format("late result of {} from lost worker {} dropped", to_string(d.unit), d.worker));
    return;
  }
  if (r.status == UnitStatus::failed) {
    report(self, control.on_failed(d.worker, d.unit, r.error));
    apply_search(self);
    dispatch(self);
    return;
  }
  self->state.committing.insert(d.worker);
  self->request(self->state.config.checkpoint, caf::infinite, commit_atom::value, std::move(r), d.seed, start_s,
                self->state.elapsed())
      .then(
          [self, d, start_s](const UnitLogEntry& entry) {
            self->state.committing.erase(d.worker);
            self->state.unit_span_s += self->state.elapsed() - start_s;
            auto event = self->state.config.control->on_committed(d.worker, entry);
            report(self, event);
            apply_search(self);
            if (!finish_leaving(self, d.worker)) dispatch(self);
          },
          [self, d](const caf::error& e) {
            self->state.committing.erase(d.worker);
            // Not durable, so not done: the unit runs again.
            report(self, self->state.config.control->on_failed(d.worker, d.unit,
                                                               "commit failed: " + to_status(e).message()));
            if (!finish_leaving(self, d.worker)) dispatch(self);
          });
}

// The task of unit d for its worker, from the config's state.
unit_task make_task(scheduler_ptr self, const Dispatch& d, StateBytes state) {
  const auto& config = self->state.config;
  unit_task task;
  task.experiment = config.experiment;
  task.sample_shape = config.shape.sample_shape;
  task.num_classes = config.shape.num_classes;
  task.task = datasets::to_string(config.shape.task);
  task.target_stddev = config.shape.target_stddev;
  task.config = d.unit.config;
  task.partition = d.unit.partition;
  task.epoch = d.unit.epoch;
  task.attempt = d.attempt;
  task.seed = d.seed;
  task.validate = d.validate;
  task.augment_hflip = config.augmentation.hflip;
  task.augment_crop_padding = config.augmentation.random_crop ? config.augmentation.crop_padding : 0;
  task.params_json = config.params_json.at(d.unit.config);
  task.state = std::move(state);
  return task;
}

// The latest state of d's config could not be loaded: a damaged one stops
// the run (recovery rolls back), any other failure fails the attempt via
// `failed`. Returns whether the run stopped.
bool state_unavailable(scheduler_ptr self, ConfigId config, const caf::error& e) {
  auto failure = to_status(e);
  if (!failure.is_corruption() || self->state.finished) return false;
  // The state failed its checksum: it is gone, and the book counts the units
  // that made it. Stop here and let the runner resume from the newest intact
  // states, which reruns exactly the units after them. Any other failure (an
  // unreadable state may be intact) is an ordinary failed attempt.
  self->state.finished = true;
  experiment_done done{self->state.elapsed(), self->state.unit_span_s,
                       fmt::format("config {}: damaged checkpoint: {}", config, failure.message()), true};
  self->send(self->state.config.listener, done_atom::value, std::move(done));
  self->quit();
  return true;
}

void run(scheduler_ptr self, const Dispatch& d) {
  double start_s = self->state.elapsed();
  self->request(self->state.config.checkpoint, caf::infinite, latest_atom::value, d.unit.config)
      .then(
          [self, d, start_s](StateBytes& state) {
            if (!still_running(self, d)) return;  // its worker was lost meanwhile
            auto worker = self->state.workers.at(d.worker);
            self->request(worker, caf::infinite, train_atom::value, make_task(self, d, std::move(state)))
                .then(
                    [self, d, start_s](unit_result& r) {
                      r.worker = d.worker;  // the scheduler's id of the worker, unique in the cluster
                      on_result(self, d, start_s, std::move(r));
                    },
                      [self, d](const caf::error& e) {
                        // The worker died mid-unit: the down handler requeues it.
                        (void)self;
                        (void)d;
                        (void)e;
                      });
          },
          [self, d](const caf::error& e) {
            if (state_unavailable(self, d.unit.config, e)) return;
            if (!still_running(self, d)) return;  // its worker was lost meanwhile
            report(self, self->state.config.control->on_failed(d.worker, d.unit,
                                                               "cannot load the state: " + to_status(e).message()));
            dispatch(self);
          });
}

// --- Data-parallel gangs (issue 14).

// The gang's attempt failed in the control: its members that have not
// answered leave the schedule until they do (see scheduler_state::draining).
void drain_gang(scheduler_ptr self, const SharedGang& g) {
  g->failed = true;
  self->state.gangs.erase(g->gang.id);
  self->send(self->state.board, rendezvous_atom::value, g->gang.id);
  auto& control = *self->state.config.control;
  for (size_t rank = 0; rank < g->gang.members.size(); ++rank) {
    const WorkerId w = g->gang.members[rank].worker;
    if (g->replied[rank] || !self->state.workers.count(w) || !control.book().has_worker(w)) continue;
    if (control.book().worker_busy(w)) continue;  // cannot be: nothing was dispatched since the failure
    self->state.draining[w] = control.book().holdings(w);
    control.remove_worker(w);
  }
}

void gang_failed(scheduler_ptr self, const SharedGang& g, const std::string& error) {
  report(self, self->state.config.control->on_gang_failed(g->gang.id, error));
  drain_gang(self, g);
  apply_search(self);
  dispatch(self);
}

// Every member answered well: rank 0's state, committed once for all k units.
void commit_gang(scheduler_ptr self, const SharedGang& g) {
  self->state.gangs.erase(g->gang.id);
  self->send(self->state.board, rendezvous_atom::value, g->gang.id);
  gang_commit commit;
  for (size_t rank = 0; rank < g->results.size(); ++rank) {
    unit_result& r = g->results[rank]->unit;
    r.worker = g->gang.members[rank].worker;
    commit.members.push_back(std::move(r));
    commit.seeds.push_back(g->gang.members[rank].seed);
  }
  const int64_t steps = g->results.front()->steps;
  const double allreduce_s = g->results.front()->allreduce_s;
  commit.start_s = g->start_s;
  commit.end_s = self->state.elapsed();
  for (const auto& m : g->gang.members) self->state.committing.insert(m.worker);
  self->request(self->state.config.checkpoint, caf::infinite, commit_gang_atom::value, std::move(commit))
      .then(
          [self, g, steps, allreduce_s](std::vector<UnitLogEntry>& entries) {
            for (const auto& m : g->gang.members) self->state.committing.erase(m.worker);
            self->state.unit_span_s += self->state.elapsed() - g->start_s;
            report(self, self->state.config.control->on_gang_committed(g->gang.id, entries, steps, allreduce_s));
            apply_search(self);
            bool left = false;
            for (const auto& m : g->gang.members) left = finish_leaving(self, m.worker) || left;
            if (!left) dispatch(self);
          },
          [self, g](const caf::error& e) {
            for (const auto& m : g->gang.members) self->state.committing.erase(m.worker);
            // Not durable, so not done: the units run again.
            report(self, self->state.config.control->on_gang_failed(
                             g->gang.id, "commit failed: " + to_status(e).message()));
            bool left = false;
            for (const auto& m : g->gang.members) left = finish_leaving(self, m.worker) || left;
            if (!left) dispatch(self);
          });
}

void on_gang_reply(scheduler_ptr self, const SharedGang& g, size_t rank, gang_result r) {
  auto& control = *self->state.config.control;
  g->replied[rank] = true;
  const WorkerId w = g->gang.members[rank].worker;
  if (auto it = self->state.draining.find(w); it != self->state.draining.end()) {
    // Out of the failed attempt at last: back in the schedule.
    auto holds = std::move(it->second);
    self->state.draining.erase(it);
    if (self->state.workers.count(w)) control.add_worker(w, std::move(holds));
    dispatch(self);
  }
  if (g->failed) return;
  if (!control.gang_running(g->gang.id)) {  // cannot be: failures drain the gang
    drain_gang(self, g);
    return;
  }
  if (r.unit.status == UnitStatus::failed) {
    return gang_failed(self, g, fmt::format("rank {} (worker {}): {}", rank, g->gang.members[rank].worker,
                                            r.unit.error));
  }
  g->results[rank] = std::move(r);
  for (const auto& result : g->results)
    if (!result) return;
  commit_gang(self, g);
}

// The gang failed (a member was lost) before its tasks went out: the members
// drained as if inside the attempt are not; they are back in the schedule.
void undrain_untasked(scheduler_ptr self, const SharedGang& g) {
  g->replied.assign(g->replied.size(), true);
  for (const Dispatch& d : g->gang.members) {
    auto it = self->state.draining.find(d.worker);
    if (it == self->state.draining.end()) continue;
    auto holds = std::move(it->second);
    self->state.draining.erase(it);
    if (self->state.workers.count(d.worker)) self->state.config.control->add_worker(d.worker, std::move(holds));
  }
  dispatch(self);
}

void run_gang(scheduler_ptr self, const GangDispatch& gang) {
  auto g = std::make_shared<GangReplies>();
  g->gang = gang;
  g->start_s = self->state.elapsed();
  g->results.resize(gang.members.size());
  g->replied.assign(gang.members.size(), false);
  self->state.gangs[gang.id] = g;
  self->request(self->state.config.checkpoint, caf::infinite, latest_atom::value, gang.config())
      .then(
          [self, g](StateBytes& state) {
            if (!self->state.config.control->gang_running(g->gang.id)) return undrain_untasked(self, g);
            for (size_t rank = 0; rank < g->gang.members.size(); ++rank) {
              const Dispatch& d = g->gang.members[rank];
              gang_task task;
              task.unit = make_task(self, d, state);
              task.gang = g->gang.id;
              task.rank = static_cast<int32_t>(rank);
              task.size = g->gang.size();
              task.timeout_s = self->state.config.gang_timeout_s;
              task.board = self->state.board;
              self->request(self->state.workers.at(d.worker), caf::infinite, gang_atom::value, std::move(task))
                  .then([self, g, rank](gang_result& r) { on_gang_reply(self, g, rank, std::move(r)); },
                        // The member died: the down handler fails the gang.
                        [](const caf::error&) {});
            }
          },
          [self, g](const caf::error& e) {
            if (state_unavailable(self, g->gang.config(), e)) return;
            if (!self->state.config.control->gang_running(g->gang.id)) return undrain_untasked(self, g);
            // No member got its task: none is inside the attempt.
            g->replied.assign(g->replied.size(), true);
            gang_failed(self, g, "cannot load the state: " + to_status(e).message());
          });
}

void dispatch(scheduler_ptr self) {
  auto started = self->state.config.control->dispatch_all();
  for (const auto& d : started.units) run(self, d);
  for (const auto& g : started.gangs) run_gang(self, g);
  // What runs where changed: status views (cerebro status, the REPL) see it.
  if (!started.empty()) report(self, "");
  finish_if_done(self);
}

// The worker is lost: it gets no more units, and it leaves the book (its
// unit, if any, goes back to the queue) at once, or, while its unit's result
// is being committed, once the commit answers.
void forget_worker(scheduler_ptr self, WorkerId id, const std::string& why, bool unit_failed) {
  auto it = self->state.workers.find(id);
  if (it == self->state.workers.end()) return;
  self->state.worker_ids.erase(it->second.address());
  self->demonitor(it->second.address());
  self->state.workers.erase(it);
  if (self->state.committing.count(id)) {
    self->state.leaving[id] = {why, unit_failed};
    return;
  }
  leave_book(self, id, why, unit_failed);
}

// Takes a lost worker out of the book: its unit, if any, goes back to the
// queue. Without any worker left (and no commit to wait for) the experiment
// cannot go on.
void leave_book(scheduler_ptr self, WorkerId id, const std::string& why, bool unit_failed) {
  auto& control = *self->state.config.control;
  self->state.draining.erase(id);
  // Its gang's attempt fails with it (in the control, below); the members
  // still inside the attempt drain.
  SharedGang gang;
  if (auto in = control.gang_of(id); in && self->state.gangs.count(*in)) gang = self->state.gangs.at(*in);
  std::string attempt;
  if (unit_failed) {
    attempt = control.on_worker_died(id, "worker died: " + why);
  } else {
    control.remove_worker(id);
  }
  if (gang) {
    auto rank = std::find_if(gang->gang.members.begin(), gang->gang.members.end(),
                             [id](const Dispatch& d) { return d.worker == id; });
    gang->replied[static_cast<size_t>(rank - gang->gang.members.begin())] = true;  // it never will
    drain_gang(self, gang);
  }
  report(self, fmt::format("worker {} {}; its unit goes back to the queue{}", id, why,
                           attempt.empty() ? "" : " (" + attempt + ")"));
  apply_search(self);
  if (self->state.workers.empty() && self->state.committing.empty() && !self->state.config.control->all_done()) {
    self->state.finished = true;
    self->send(self->state.config.listener, done_atom::value,
               experiment_done{self->state.elapsed(), self->state.unit_span_s, "every worker is gone"});
    self->quit();
    return;
  }
  dispatch(self);
}

// A person's steering (actors/experiment_steering.cpp sends it): applied to
// the control, its record persisted with the decisions, then dispatch.
caf::result<bool> steer(scheduler_ptr self, SteeringCommand command, ConfigId config,
                        const std::string& params_json, int32_t epochs, ConfigId cloned_from) {
  auto& control = *self->state.config.control;
  Status applied = Status::error(fmt::format("\"{}\" does not change the schedule", to_string(command)));
  switch (command) {
    case SteeringCommand::pause: applied = control.pause(); break;
    case SteeringCommand::resume: applied = control.resume(); break;
    case SteeringCommand::stop: applied = control.stop_config(config); break;
    case SteeringCommand::add:  // a clone arrives as an add with cloned_from
      applied = control.add_config_by_user(config, epochs, nlohmann::json::parse(params_json), cloned_from);
      if (applied.ok()) self->state.config.params_json[config] = params_json;
      break;
    default: break;
  }
  if (!applied.ok()) return caf::make_error(caf::sec::runtime_error, applied.message());
  for (const auto& record : control.take_user_actions())
    self->request(self->state.config.checkpoint, caf::infinite, decision_atom::value, record.dump())
        .then([](bool) {}, [self](const caf::error& e) { report(self, "cannot record a user action: " + caf::to_string(e)); });
  report(self, command == SteeringCommand::stop ? fmt::format("config {} stopped by the user", config)
               : command == SteeringCommand::add ? fmt::format("config {} added by the user", config)
                                                 : to_string(command) + "d by the user");
  apply_search(self);  // a stop may unblock the procedure's waiting decisions
  dispatch(self);
  return true;
}

scheduler_actor::behavior_type scheduler_behavior(scheduler_ptr self, scheduler_config config) {
  self->state.config = std::move(config);
  self->state.board = spawn_rendezvous_board(self->system());
  for (auto& [id, worker] : self->state.config.workers) {
    self->state.worker_ids[worker.address()] = id;
    self->state.workers[id] = worker;
    self->monitor(worker);
  }
  self->set_down_handler([self](caf::down_msg& msg) {
    auto it = self->state.worker_ids.find(msg.source);
    if (it == self->state.worker_ids.end()) return;
    auto id = it->second;
    auto worker = self->state.workers[id];
    // A lost connection is the node's failure; any other exit is the
    // worker's, and its unit counts as a failed attempt.
    bool node_lost = msg.reason == caf::exit_reason::remote_link_unreachable;
    forget_worker(self, id, fmt::format("is gone ({})", caf::to_string(msg.reason)), !node_lost);
    // The worker died on its own, so its node is reachable and its agent (the
    // node's supervisor) can respawn it: the listener asks at once. A worker
    // that died mid-unit put its unit back in the queue, so no done_atom of
    // ours precedes this message, and messages between two actors keep their
    // order: the respawn is handled before the run ends. A lost node's agent
    // is gone too: the listener hears of that by its own monitor.
    if (!node_lost && !self->state.finished)
      self->send(self->state.config.listener, worker_lost_atom::value, id, worker);
  });
  return {
      [self](add_worker_atom, WorkerId id, worker_actor worker, std::vector<PartitionId> holds) {
        if (self->state.finished || self->state.workers.count(id)) return;
        self->state.worker_ids[worker.address()] = id;
        self->state.workers[id] = worker;
        self->monitor(worker);
        self->state.config.control->add_worker(id, std::move(holds));
        report(self, fmt::format("worker {} joined", id));
        dispatch(self);
      },
      [self](remove_worker_atom, WorkerId id) {
        forget_worker(self, id, "is lost (its agent is dead or stopped answering)", false);
      },
      [self](holds_atom, WorkerId id, std::vector<PartitionId> holds) {
        if (!self->state.workers.count(id)) return;
        if (auto it = self->state.draining.find(id); it != self->state.draining.end()) {
          it->second = std::move(holds);  // it rejoins with these once out of its failed gang
          return;
        }
        self->state.config.control->add_worker(id, std::move(holds));
        dispatch(self);
      },
      [self](start_atom) {
        self->state.started = Clock::now();
        report(self, "started");
        apply_search(self);  // decisions about configs rejected at setup
        dispatch(self);
      },
      [self](control_atom, SteeringCommand command, ConfigId config, const std::string& params_json,
             int32_t epochs, ConfigId cloned_from) -> caf::result<bool> {
        if (self->state.finished) return caf::make_error(caf::sec::runtime_error, "the experiment has finished");
        return steer(self, command, config, params_json, epochs, cloned_from);
      },
  };
}

}  // namespace

scheduler_actor spawn_scheduler(caf::actor_system& system, scheduler_config config) {
  return system.spawn(scheduler_behavior, std::move(config));
}

}  // namespace cerebro
