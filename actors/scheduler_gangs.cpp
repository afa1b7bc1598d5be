// The scheduler actor's data-parallel gangs: a gang's tasks to its members,
// their answers, the one commit of rank 0's state, and the members that
// drain when an attempt fails (WorkerRoster decides who drains and when the
// attempt commits).
#include <fmt/format.h>

#include "actors/scheduler_shell.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro::scheduler_detail {

void end_gang(scheduler_ptr self, int64_t gang) {
  self->state.roster->fail_gang(gang);
  if (self->state.gangs.erase(gang)) self->send(self->state.board, rendezvous_atom::value, gang);
}

namespace {

void gang_failed(scheduler_ptr self, const GangDispatch& g, const std::string& error) {
  report(self, self->state.config.control->on_gang_failed(g.id, error));
  end_gang(self, g.id);
  apply_search(self);
  dispatch(self);
}

// Every member answered well: rank 0's state, committed once for all k units.
void commit_gang(scheduler_ptr self, const GangDispatch& g) {
  auto run = std::move(self->state.gangs.at(g.id));
  self->state.gangs.erase(g.id);
  self->send(self->state.board, rendezvous_atom::value, g.id);
  auto members = self->state.roster->commit_gang(g.id);
  gang_commit commit;
  for (size_t rank = 0; rank < run.results.size(); ++rank) {
    unit_result& r = run.results[rank]->unit;
    r.worker = g.members[rank].worker;
    commit.members.push_back(std::move(r));
    commit.seeds.push_back(g.members[rank].seed);
  }
  const int64_t steps = run.results.front()->steps;
  const double allreduce_s = run.results.front()->allreduce_s;
  const double start_s = run.start_s;
  commit.start_s = start_s;
  commit.end_s = self->state.elapsed();
  self->request(self->state.config.checkpoint, caf::infinite, commit_gang_atom::value, std::move(commit))
      .then(
          [self, g, members, start_s, steps, allreduce_s](std::vector<UnitLogEntry>& entries) {
            self->state.unit_span_s += self->state.elapsed() - start_s;
            report(self, self->state.config.control->on_gang_committed(g.id, entries, steps, allreduce_s));
            apply_search(self);
            if (!leave_after_commit(self, members)) dispatch(self);
          },
          [self, g, members](const caf::error& e) {
            // Not durable, so not done: the units run again.
            report(self, self->state.config.control->on_gang_failed(g.id, "commit failed: " + to_status(e).message()));
            if (!leave_after_commit(self, members)) dispatch(self);
          });
}

void on_gang_reply(scheduler_ptr self, const GangDispatch& g, size_t rank, gang_result r) {
  using Step = WorkerRoster::GangStep;
  const bool ok = r.unit.status != UnitStatus::failed;
  auto reply = self->state.roster->replied(g, rank, ok);
  if (reply.rejoined) dispatch(self);  // out of a failed attempt at last: back in the schedule
  switch (reply.next) {
    case Step::ignore: return;
    case Step::drain: return end_gang(self, g.id);
    case Step::fail:
      return gang_failed(self, g, fmt::format("rank {} (worker {}): {}", rank, g.members[rank].worker, r.unit.error));
    case Step::wait: self->state.gangs.at(g.id).results[rank] = std::move(r); return;
    case Step::commit: self->state.gangs.at(g.id).results[rank] = std::move(r); return commit_gang(self, g);
  }
}

void send_gang_tasks(scheduler_ptr self, const GangDispatch& g, const StateBytes& state) {
  for (size_t rank = 0; rank < g.members.size(); ++rank) {
    const Dispatch& d = g.members[rank];
    gang_task task;
    task.unit = make_task(self, d, state);
    task.gang = g.id;
    task.rank = static_cast<int32_t>(rank);
    task.size = g.size();
    task.timeout_s = self->state.config.gang_timeout_s;
    task.board = self->state.board;
    self->request(self->state.workers.at(d.worker), caf::infinite, gang_atom::value, std::move(task))
        .then([self, g, rank](gang_result& r) { on_gang_reply(self, g, rank, std::move(r)); },
              // The member died: the down handler fails the gang.
              [](const caf::error&) {});
  }
}

}  // namespace

void run_gang(scheduler_ptr self, const GangDispatch& gang) {
  auto& run = self->state.gangs[gang.id];
  run.start_s = self->state.elapsed();
  run.results.resize(gang.members.size());
  self->state.roster->gang_started(gang);
  self->request(self->state.config.checkpoint, caf::infinite, latest_atom::value, gang.config())
      .then(
          [self, gang](StateBytes& state) {
            // Failed meanwhile (a member was lost): those drained rejoin, none being inside.
            if (!self->state.roster->gang_begins(gang)) return dispatch(self);
            send_gang_tasks(self, gang, state);
          },
          [self, gang](const caf::error& e) {
            if (state_unavailable(self, gang.config(), e)) return;
            if (!self->state.roster->gang_begins(gang)) return dispatch(self);
            // No member got its task: none is inside the attempt.
            self->state.roster->none_tasked(gang.id);
            gang_failed(self, gang, "cannot load the state: " + to_status(e).message());
          });
}

}  // namespace cerebro::scheduler_detail
