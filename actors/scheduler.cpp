// The scheduler actor: its behaviour, and its workers joining and leaving
// (WorkerRoster decides when a lost one leaves the book). Units, gangs,
// pipelines and steering are in the other scheduler_*.cpp files
// (actors/scheduler_shell.hpp lists them).
#include <fmt/format.h>

#include "actors/scheduler_shell.hpp"
#include "runtime/base/fault_injection.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro {

namespace scheduler_detail {

void report(scheduler_ptr self, const std::string& event) {
  auto p = self->state.config.control->progress(self->state.elapsed());
  p.event = event;
  self->send(self->state.config.listener, progress_atom::value, std::move(p));
}

void report(scheduler_ptr self, const ControlEvents& events) { report(self, event_line(events)); }

void finish(scheduler_ptr self, experiment_done done) {
  if (self->state.finished) return;
  self->state.finished = true;
  self->send(self->state.config.listener, done_atom::value, std::move(done));
  self->quit();
}

void finish_if_done(scheduler_ptr self) {
  if (!self->state.config.control->all_done()) return;
  finish(self, experiment_done{self->state.elapsed(), self->state.unit_span_s, ""});
}

bool end_without_workers(scheduler_ptr self) {
  if (self->state.finished || !self->state.roster->stranded()) return false;
  finish(self, experiment_done{self->state.elapsed(), self->state.unit_span_s, "every worker is gone"});
  return true;
}

// Takes a lost worker out of the book: its unit, if any, goes back to the
// queue, and its gang's attempt fails with it (in the control); the members
// still inside the attempt drain. Without any worker left (and no commit to
// wait for) the experiment cannot go on.
void leave_book(scheduler_ptr self, const WorkerRoster::Leave& leave) {
  auto& control = *self->state.config.control;
  auto gang = self->state.roster->leaving(leave.worker);
  std::string attempt;
  if (leave.unit_failed) {
    attempt = event_line(control.on_worker_died(leave.worker, "worker died: " + leave.why));
  } else {
    control.remove_worker(leave.worker);
  }
  if (gang) {
    self->state.roster->member_left(*gang, leave.worker);
    end_gang(self, *gang);
  }
  report(self, fmt::format("worker {} {}; its unit goes back to the queue{}", leave.worker, leave.why,
                           attempt.empty() ? "" : " (" + attempt + ")"));
  apply_search(self);
  if (end_without_workers(self)) return;
  dispatch(self);
}

bool leave_after_commit(scheduler_ptr self, const std::vector<WorkerId>& workers) {
  auto leaves = self->state.roster->commit_answered(workers);
  for (const auto& leave : leaves) leave_book(self, leave);
  return !leaves.empty();
}

namespace {

void track(scheduler_ptr self, WorkerId id, const worker_actor& worker) {
  self->state.worker_ids[worker.address()] = id;
  self->state.workers[id] = worker;
  self->monitor(worker);
}

void add_worker(scheduler_ptr self, WorkerId id, worker_actor worker, std::vector<PartitionId> holds) {
  if (self->state.finished || !self->state.roster->join(id, std::move(holds))) return;
  track(self, id, worker);
  report(self, fmt::format("worker {} joined", id));
  dispatch(self);
}

// The worker is lost: it gets no more units, and it leaves the book (its
// unit, if any, goes back to the queue) at once or, while its gang's result
// or its pipeline's is being committed, once the commit answers. (A unit
// alone that was handed over for commit is no longer the worker's: the book
// keeps it.)
void lose_worker(scheduler_ptr self, WorkerId id, const std::string& why, bool unit_failed) {
  auto it = self->state.workers.find(id);
  if (it == self->state.workers.end()) return;
  self->state.worker_ids.erase(it->second.address());
  self->demonitor(it->second.address());
  self->state.workers.erase(it);
  if (auto leave = self->state.roster->lose(id, why, unit_failed)) leave_book(self, *leave);
}

void on_worker_down(scheduler_ptr self, const caf::down_msg& msg) {
  auto it = self->state.worker_ids.find(msg.source);
  if (it == self->state.worker_ids.end()) return;
  auto id = it->second;
  auto worker = self->state.workers.at(id);
  // A lost connection is the node's failure; any other exit is the worker's,
  // and its unit counts as a failed attempt.
  bool node_lost = msg.reason == caf::exit_reason::remote_link_unreachable;
  lose_worker(self, id, fmt::format("is gone ({})", caf::to_string(msg.reason)), !node_lost);
  // The worker died on its own, so its node is reachable and its agent (the
  // node's supervisor) can respawn it: the listener asks at once. A worker
  // that died mid-unit put its unit back in the queue, so no done_atom of
  // ours precedes this message, and messages between two actors keep their
  // order: the respawn is handled before the run ends. A lost node's agent
  // is gone too: the listener hears of that by its own monitor.
  if (!node_lost && !self->state.finished) self->send(self->state.config.listener, worker_lost_atom::value, id, worker);
}

void start(scheduler_ptr self) {
  self->state.started = Clock::now();
  report(self, "started");
  apply_search(self);  // decisions about configs rejected at setup
  dispatch(self);
  // Every config that waits for units is worth a read ahead.
  self->state.states->want_waiting(self->state.config.control->book());
  prefetch_next(self);
}

}  // namespace

scheduler_actor::behavior_type scheduler_behavior(scheduler_ptr self, scheduler_config config) {
  auto& st = self->state;
  st.config = std::move(config);
  st.roster = std::make_unique<WorkerRoster>(*st.config.control);
  // Under test fault injection damaged and unreadable states must be read
  // back from the store to be found: nothing is kept then.
  st.states = std::make_unique<KeptStates>(!FaultInjection::instance().enabled());
  st.board = spawn_rendezvous_board(self->system());
  for (auto& [id, worker] : st.config.workers) {
    track(self, id, worker);
    st.roster->adopt(id);
  }
  self->set_down_handler([self](caf::down_msg& msg) { on_worker_down(self, msg); });
  return {
      [self](add_worker_atom, WorkerId id, worker_actor worker, std::vector<PartitionId> holds) {
        add_worker(self, id, std::move(worker), std::move(holds));
      },
      [self](remove_worker_atom, WorkerId id) {
        lose_worker(self, id, "is lost (its agent is dead or stopped answering)", false);
      },
      [self](holds_atom, WorkerId id, std::vector<PartitionId> holds) {
        if (self->state.roster->holds(id, std::move(holds))) dispatch(self);
      },
      [self](start_atom) { start(self); },
      [self](control_atom, SteeringCommand command, ConfigId target, const std::string& params_json, int32_t epochs,
             ConfigId cloned_from, int32_t stages) -> caf::result<bool> {
        if (self->state.finished) return make_error(StatusCode::failed_precondition, "the experiment has finished");
        return steer(self, command, target, params_json, epochs, cloned_from, stages);
      },
  };
}

}  // namespace scheduler_detail

scheduler_actor spawn_scheduler(caf::actor_system& system, scheduler_config config) {
  return system.spawn(scheduler_detail::scheduler_behavior, std::move(config));
}

}  // namespace cerebro
