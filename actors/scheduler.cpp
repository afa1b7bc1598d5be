#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "actors/scheduler_shell.hpp"
#include "runtime/base/fault_injection.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro {

namespace scheduler_detail {

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
void forget_state(scheduler_ptr self, ConfigId config);

// Persists the search procedure's decisions and carries out its state copies
// (PBT): a copied-into config is dispatched only after its copy is durable.
void apply_search(scheduler_ptr self) {
  auto& control = *self->state.config.control;
  // Configs the search proposed (tpe): durable before they are scheduled. A
  // rejected one frees its slot, and the search may propose again.
  for (auto proposals = control.take_proposals(); !proposals.empty(); proposals = control.take_proposals()) {
    for (const auto& p : proposals) {
      auto& create = self->state.config.create_config;
      Result<int32_t> made = create ? create(p.config, p.params)
                                    : Result<int32_t>(Status::error("this run cannot create configs"));
      if (made.ok()) {
        self->state.config.params_json[p.config] = p.params.dump();
        // A pipeline config's stages are set as it joins: none of its units runs whole.
        control.on_config_created(p.config, *made);
        report(self, fmt::format("config {} proposed by {} ({}): {}{}", p.config, control.search().name(), p.reason,
                                 describe_params(p.params),
                                 *made >= 2 ? fmt::format("; it trains as a pipeline over {} stages", *made) : ""));
      } else {
        report(self, control.on_config_rejected(p.config, made.error()));
      }
    }
  }
  for (const auto& d : control.take_decisions())
    self->request(self->state.config.checkpoint, caf::infinite, decision_atom::value, d)
        .then([](bool) {}, [self](const caf::error& e) { report(self, "cannot record a decision: " + caf::to_string(e)); });
  for (const auto& copy : control.take_state_copies()) {
    forget_state(self, copy.to);  // written by the copy now: read it back from the store
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

// After a gang's commit answered: a member lost while it was in flight leaves
// now. Returns whether it did (leave_book dispatches).
bool finish_leaving(scheduler_ptr self, WorkerId id) {
  auto it = self->state.leaving.find(id);
  if (it == self->state.leaving.end()) return false;
  auto [why, unit_failed] = it->second;
  self->state.leaving.erase(it);
  leave_book(self, id, why, unit_failed);
  return true;
}

// Without any worker, and with no commit left to answer, the experiment
// cannot go on: it ends here. Returns whether it did.
bool end_without_workers(scheduler_ptr self) {
  auto& control = *self->state.config.control;
  if (self->state.finished || !self->state.workers.empty() || !self->state.committing.empty() ||
      control.book().handed_over_units() > 0 || control.all_done())
    return false;
  self->state.finished = true;
  self->send(self->state.config.listener, done_atom::value,
             experiment_done{self->state.elapsed(), self->state.unit_span_s, "every worker is gone"});
  self->quit();
  return true;
}

// Whether the scheduler hands committed states to the next units itself
// (scheduler_state::durable_states).
bool keeps_states(scheduler_ptr) { return !FaultInjection::instance().enabled(); }

// config's state is being written by someone else (a copy, a gang, a commit
// that failed): its next unit reads the store.
void forget_state(scheduler_ptr self, ConfigId config) {
  self->state.durable_states.erase(config);
  self->state.prefetch_wanted.erase(config);
}

// Reads the next wanted config's state into the kept states, behind the units
// already dispatched (the checkpoint actor answers in order). One read at a
// time; a state too large to keep ends the prefetch (the others are likely
// as large: reading them would be wasted).
void prefetch_next(scheduler_ptr self) {
  auto& st = self->state;
  if (st.prefetching || st.finished || st.prefetch_wanted.empty()) return;
  const ConfigId config = *st.prefetch_wanted.begin();
  st.prefetching = true;
  self->request(st.config.checkpoint, caf::infinite, latest_atom::value, config)
      .then(
          [self, config](StateBytes& state) {
            self->state.prefetching = false;
            if (!self->state.prefetch_wanted.erase(config)) return prefetch_next(self);  // dispatched meanwhile
            if (!self->state.durable_states.keeps(state.size())) return self->state.prefetch_wanted.clear();
            self->state.durable_states.put(config, std::move(state));
            prefetch_next(self);
          },
          [self, config](const caf::error&) {
            // Its unit will read the store itself and report what is wrong.
            self->state.prefetching = false;
            self->state.prefetch_wanted.erase(config);
            prefetch_next(self);
          });
}

// At the start: every config that waits for units is worth a prefetch.
void start_prefetch(scheduler_ptr self) {
  if (!keeps_states(self)) return;
  const auto& book = self->state.config.control->book();
  for (auto c : book.configs())
    if (book.state(c) == ConfigState::pending_epoch)
      self->state.prefetch_wanted.insert(c);
  for (const auto& w : book.workers())
    if (auto running = book.running_on(w)) self->state.prefetch_wanted.erase(running->config);
  prefetch_next(self);
}

// The unit's result is in: the worker takes its next unit at once while the
// result is made durable; the unit counts once its commit answers.
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
  // The config stays busy in the book until the commit answers (durable
  // before acknowledged); a worker lost meanwhile leaves at once without
  // touching the unit, which commits once either way. The worker's next unit
  // goes out first: its state read (another config's) need not wait behind
  // the commit, and the unit log shows it started before this commit.
  r.result_s = self->state.elapsed();
  control.on_result(d.worker, d.unit);
  dispatch(self);
  // The state the config's next unit starts from, kept once it is durable.
  auto kept = keeps_states(self) && self->state.durable_states.keeps(r.state.size())
                  ? std::make_shared<StateBytes>(r.state)
                  : nullptr;
  self->request(self->state.config.checkpoint, caf::infinite, commit_atom::value, std::move(r), d.seed, start_s,
                self->state.elapsed())
      .then(
          [self, d, start_s, kept](const UnitLogEntry& entry) {
            if (kept) self->state.durable_states.put(d.unit.config, std::move(*kept));
            self->state.unit_span_s += self->state.elapsed() - start_s;
            auto event = self->state.config.control->on_committed(d.worker, entry);
            report(self, event);
            apply_search(self);
            if (!end_without_workers(self)) dispatch(self);
          },
          [self, d](const caf::error& e) {
            // Not durable, so not done: the unit runs again, from what the store holds.
            forget_state(self, d.unit.config);
            report(self, self->state.config.control->on_commit_failed(d.unit, "commit failed: " +
                                                                                  to_status(e).message()));
            apply_search(self);
            if (!end_without_workers(self)) dispatch(self);
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
  task.read_ahead = config.read_ahead;
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

// Sends unit d with the config's latest durable state to its worker.
void send_task(scheduler_ptr self, const Dispatch& d, double start_s, StateBytes state) {
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
}

void run(scheduler_ptr self, const Dispatch& d) {
  double start_s = self->state.elapsed();
  self->state.prefetch_wanted.erase(d.unit.config);  // a read in flight for it is older than what this unit makes
  if (keeps_states(self)) {
    if (auto state = self->state.durable_states.take(d.unit.config)) return send_task(self, d, start_s, std::move(*state));
  }
  self->request(self->state.config.checkpoint, caf::infinite, latest_atom::value, d.unit.config)
      .then(
          [self, d, start_s](StateBytes& state) {
            if (!still_running(self, d)) return;  // its worker was lost meanwhile
            send_task(self, d, start_s, std::move(state));
          },
          [self, d](const caf::error& e) {
            if (state_unavailable(self, d.unit.config, e)) return;
            if (!still_running(self, d)) return;  // its worker was lost meanwhile
            report(self, self->state.config.control->on_failed(d.worker, d.unit,
                                                               "cannot load the state: " + to_status(e).message()));
            dispatch(self);
          });
}

void dispatch(scheduler_ptr self) {
  auto started = self->state.config.control->dispatch_all();
  for (const auto& d : started.units) run(self, d);
  for (const auto& g : started.gangs) {
    forget_state(self, g.config());  // the gang's commit writes its state
    run_gang(self, g);
  }
  for (const auto& p : started.pipelines) {
    forget_state(self, p.driver.unit.config);  // the attempt reads and commits the framed state itself
    run_pipeline(self, p);
  }
  // What runs where changed: status views (cerebro status, the REPL) see it.
  if (!started.empty()) report(self, "");
  if (!started.notices.empty()) {
    // A pipeline config waits for workers (said once), or failed because it
    // never can have them: its decisions are persisted and what it freed
    // (a search's slot, the workers it reserved) is dispatched. Each notice
    // is given once, so this ends.
    for (const auto& line : started.notices) report(self, line);
    apply_search(self);
    return dispatch(self);
  }
  finish_if_done(self);
}

// The worker is lost: it gets no more units, and it leaves the book (its
// unit, if any, goes back to the queue) at once, or, while its gang's result
// is being committed, once the commit answers. (A unit alone that was handed
// over for commit is no longer the worker's: the book keeps it.)
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
  if (end_without_workers(self)) return;
  dispatch(self);
}

// A person's steering (actors/experiment_steering.cpp sends it): applied to
// the control, its record persisted with the decisions, then dispatch.
caf::result<bool> steer(scheduler_ptr self, SteeringCommand command, ConfigId config,
                        const std::string& params_json, int32_t epochs, ConfigId cloned_from, int32_t stages) {
  auto& control = *self->state.config.control;
  Status applied = Status::error(fmt::format("\"{}\" does not change the schedule", to_string(command)));
  switch (command) {
    case SteeringCommand::pause: applied = control.pause(); break;
    case SteeringCommand::resume: applied = control.resume(); break;
    case SteeringCommand::stop: applied = control.stop_config(config); break;
    case SteeringCommand::add:  // a clone arrives as an add with cloned_from
      // With its pipeline stages (the steering planned them and recorded
      // them in the store's meta): set before anything is dispatched again.
      applied = control.add_config_by_user(config, epochs, nlohmann::json::parse(params_json), cloned_from, stages);
      if (applied.ok()) self->state.config.params_json[config] = params_json;
      break;
    default: break;
  }
  if (!applied.ok()) return caf::make_error(caf::sec::runtime_error, applied.message());
  for (const auto& record : control.take_user_actions())
    self->request(self->state.config.checkpoint, caf::infinite, decision_atom::value, record.dump())
        .then([](bool) {}, [self](const caf::error& e) { report(self, "cannot record a user action: " + caf::to_string(e)); });
  report(self, command == SteeringCommand::stop ? fmt::format("config {} stopped by the user", config)
               : command == SteeringCommand::add
                   ? fmt::format("config {} added by the user{}", config,
                                 stages >= 2 ? fmt::format("; it trains as a pipeline over {} stages", stages) : "")
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
        start_prefetch(self);
      },
      [self](control_atom, SteeringCommand command, ConfigId config, const std::string& params_json,
             int32_t epochs, ConfigId cloned_from, int32_t stages) -> caf::result<bool> {
        if (self->state.finished) return caf::make_error(caf::sec::runtime_error, "the experiment has finished");
        return steer(self, command, config, params_json, epochs, cloned_from, stages);
      },
  };
}

}  // namespace

scheduler_actor spawn_scheduler(caf::actor_system& system, scheduler_config config) {
  return system.spawn(scheduler_detail::scheduler_behavior, std::move(config));
}

}  // namespace cerebro
