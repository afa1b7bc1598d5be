// The scheduler actor's data-parallel gangs (issue 14): a gang's tasks to its
// members, their answers, the one commit of rank 0's state, and the members
// that drain when an attempt fails. Split from actors/scheduler.cpp.
#include <fmt/format.h>

#include "actors/scheduler_shell.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro::scheduler_detail {

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

}  // namespace cerebro::scheduler_detail
