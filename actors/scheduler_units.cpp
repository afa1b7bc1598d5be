// The scheduler actor's units alone: what ExperimentControl dispatches goes
// out with the config's latest durable state (kept, or read from the
// checkpoint actor), the result is handed over to the book and committed,
// and states are read ahead at the start (KeptStates).
#include <fmt/format.h>

#include "actors/scheduler_shell.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro::scheduler_detail {

void prefetch_next(scheduler_ptr self) {
  if (self->state.finished) return;
  auto config = self->state.states->next_read();
  if (!config) return;
  // Behind the units already dispatched: the checkpoint actor answers in order.
  self->request(self->state.config.checkpoint, caf::infinite, latest_atom::value, *config)
      .then(
          [self, config](StateBytes& state) {
            self->state.states->read_answered(*config, std::move(state));
            prefetch_next(self);
          },
          [self, config](const caf::error&) {
            // Its unit will read the store itself and report what is wrong.
            self->state.states->read_failed(*config);
            prefetch_next(self);
          });
}

unit_task make_task(scheduler_ptr self, const Dispatch& d, StateBytes state) {
  const auto& config = self->state.config;
  unit_task task;
  task.experiment = config.experiment;
  task.sample_shape = config.shape.sample_shape;
  task.num_classes = config.shape.num_classes;
  task.task = datasets::to_string(config.shape.task);
  task.target_stddev = config.shape.target_stddev;
  task.beam = static_cast<int32_t>(config.shape.beam);
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

// The latest state of a config could not be loaded: a damaged one stops the
// run (recovery rolls back), any other failure is an ordinary failed attempt
// (the caller's). Returns whether the run stopped.
bool state_unavailable(scheduler_ptr self, ConfigId config, const caf::error& e) {
  auto failure = to_status(e);
  if (!failure.is_corruption() || self->state.finished) return false;
  // The state failed its checksum: it is gone, and the book counts the units
  // that made it. Stop here and let the runner resume from the newest intact
  // states, which reruns exactly the units after them.
  finish(self, experiment_done{self->state.elapsed(), self->state.unit_span_s,
                               fmt::format("config {}: damaged checkpoint: {}", config, failure.message()), true});
  return true;
}

namespace {

// The unit's result is in: the worker takes its next unit at once while the
// result is made durable; the unit counts once its commit answers.
void on_result(scheduler_ptr self, const Dispatch& d, double start_s, unit_result r) {
  auto& control = *self->state.config.control;
  // A worker dropped as lost (hung) may still answer later: its unit went
  // back to the queue and may have run elsewhere, so the late result must not
  // count (a unit commits once).
  if (!self->state.roster->runs(d.worker, d.unit)) {
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
  auto kept = self->state.states->keeps(r.state.size()) ? std::make_shared<StateBytes>(r.state) : nullptr;
  self->request(self->state.config.checkpoint, caf::infinite, commit_atom::value, std::move(r), d.seed, start_s,
                self->state.elapsed())
      .then(
          [self, d, start_s, kept](const UnitLogEntry& entry) {
            if (kept) self->state.states->committed(d.unit.config, std::move(*kept));
            self->state.unit_span_s += self->state.elapsed() - start_s;
            report(self, self->state.config.control->on_committed(d.worker, entry));
            apply_search(self);
            if (!end_without_workers(self)) dispatch(self);
          },
          [self, d](const caf::error& e) {
            // Not durable, so not done: the unit runs again, from what the store holds.
            self->state.states->forget(d.unit.config);
            report(self,
                   self->state.config.control->on_commit_failed(d.unit, "commit failed: " + to_status(e).message()));
            apply_search(self);
            if (!end_without_workers(self)) dispatch(self);
          });
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
          // The worker died mid-unit: the down handler requeues it.
          [](const caf::error&) {});
}

void run(scheduler_ptr self, const Dispatch& d) {
  double start_s = self->state.elapsed();
  // A read ahead in flight for it is older than what this unit makes.
  if (auto state = self->state.states->take(d.unit.config)) return send_task(self, d, start_s, std::move(*state));
  self->request(self->state.config.checkpoint, caf::infinite, latest_atom::value, d.unit.config)
      .then(
          [self, d, start_s](StateBytes& state) {
            if (!self->state.roster->runs(d.worker, d.unit)) return;  // its worker was lost meanwhile
            send_task(self, d, start_s, std::move(state));
          },
          [self, d](const caf::error& e) {
            if (state_unavailable(self, d.unit.config, e)) return;
            if (!self->state.roster->runs(d.worker, d.unit)) return;  // its worker was lost meanwhile
            report(self, self->state.config.control->on_failed(d.worker, d.unit,
                                                               "cannot load the state: " + to_status(e).message()));
            dispatch(self);
          });
}

}  // namespace

void dispatch(scheduler_ptr self) {
  auto started = self->state.config.control->dispatch_all();
  for (const auto& d : started.units) run(self, d);
  for (const auto& g : started.gangs) {
    self->state.states->forget(g.config());  // the gang's commit writes its state
    run_gang(self, g);
  }
  for (const auto& p : started.pipelines) {
    // The attempt reads and commits the framed state itself.
    self->state.states->forget(p.driver.unit.config);
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

}  // namespace cerebro::scheduler_detail
