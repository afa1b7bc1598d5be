#pragma once
// The scheduler actor's workers as its protocol sees them: which workers it
// has, and when a worker it lost leaves ExperimentControl's book. The actor
// (actors/scheduler*.cpp) carries the decisions out; the handles stay there,
// keyed by WorkerId.
//
//  - Commit: the members of a gang, or a pipeline's driver, whose one result
//    is being made durable are committing. One lost meanwhile leaves the book
//    only once the commit answers: its units, durable by then, must not go
//    back to the queue (they would commit twice). A unit alone needs none of
//    this: its worker hands the unit over to the book at its result
//    (MopBook::hand_over) and is free at once.
//  - Drain: when a gang's attempt fails, its members that have not answered
//    are still inside it (Gloo waits for the dead peer until its timeout), so
//    they leave the schedule until they answer, then rejoin with the
//    partitions they hold by then.
//  - Gang replies: which ranks of a running attempt answered, and whether
//    well; the attempt commits once every rank answered well.
//
// Plain bookkeeping over the control: it calls add_worker, remove_worker and
// the book's queries. What a result, failure or loss counts (the control's
// on_* calls, whose lines the actor reports) stays the actor's: it calls
// them where these decisions say. Not thread safe: one owner.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/base/ids.hpp"
#include "runtime/scheduling/experiment_control.hpp"

namespace cerebro {

class WorkerRoster {
 public:
  // A lost worker's way out of the book, for the shell to carry out:
  // ExperimentControl::on_worker_died when its unit failed with it, else
  // remove_worker.
  struct Leave {
    WorkerId worker = 0;
    std::string why;
    bool unit_failed = false;
  };

  // What a gang member's answer leads to.
  enum class GangStep {
    ignore,  // the attempt ended already (failed): nothing of it counts
    wait,    // other ranks have not answered well yet
    commit,  // every rank answered well: commit_gang(), then commit the result
    fail,    // this rank failed: tell the control (on_gang_failed), then fail_gang()
    drain,   // the control no longer runs the attempt (cannot be): it was drained here
  };
  struct GangReply {
    bool rejoined = false;  // the member was draining and is back in the schedule: dispatch
    GangStep next = GangStep::ignore;
  };

  explicit WorkerRoster(ExperimentControl& control) : control_(control) {}

  // --- Workers.
  // w is the scheduler's from the start (its holdings are in the control already).
  void adopt(WorkerId w) { present_.insert(w); }
  // w joins mid-run holding `holds`; false (nothing changes) if it is here already.
  bool join(WorkerId w, std::vector<PartitionId> holds);
  bool has(WorkerId w) const { return present_.count(w) > 0; }
  bool empty() const { return present_.empty(); }
  // w now holds `holds`: the book takes them at once or, while w drains, when
  // it rejoins. Returns whether the book changed (the shell dispatches).
  bool holds(WorkerId w, std::vector<PartitionId> holds);
  // w is lost: it is no longer here. The leave to carry out now, or nullopt:
  // w was not here, or it is committing and leaves when the commit answers
  // (commit_answered returns it then).
  std::optional<Leave> lose(WorkerId w, std::string why, bool unit_failed);
  // Carrying out a leave, before the control's call: w stops draining.
  // Returns the running gang attempt w is a member of, if any; after the
  // control's call (which fails that attempt) the shell calls member_left.
  std::optional<int64_t> leaving(WorkerId w);
  // w, a member of `gang`, will never answer: the attempt ends and its other
  // members still inside it drain. Returns fail_gang's answer.
  bool member_left(int64_t gang, WorkerId w);

  // Does w still run u? Not once w was lost: its unit went back to the queue
  // (and may run elsewhere), so a late answer of w must not count.
  bool runs(WorkerId w, const Unit& u) const;
  // No worker left and nothing being committed (no commit either of a unit
  // handed over): with units left, the experiment cannot go on.
  bool stranded() const;

  // --- Commits of a gang's result or a pipeline driver's.
  void commit_started(const std::vector<WorkerId>& workers);
  // The commit answered (durable or not): the workers lost meanwhile leave
  // now, in the order given.
  std::vector<Leave> commit_answered(const std::vector<WorkerId>& workers);
  bool committing(WorkerId w) const { return committing_.count(w) > 0; }

  // --- Gang attempts (members in rank order).
  void gang_started(const GangDispatch& gang);
  // The attempt begins: its config's state was read (its tasks go out now),
  // or could not be. False when the attempt failed meanwhile (a member was
  // lost during the read): no member is inside it, so those drained as if
  // they were rejoin at once (the shell dispatches).
  bool gang_begins(const GangDispatch& gang);
  // No member got its task (the state could not be read): none is inside the
  // attempt, so none drains when it fails.
  void none_tasked(int64_t gang);
  // Rank `rank` of `gang` answered; `ok`: a good result.
  GangReply replied(const GangDispatch& gang, size_t rank, bool ok);
  // The attempt failed (the control knows): its members still inside it
  // (present, idle in the book, not answered) drain. False if it had ended
  // already (nothing changes).
  bool fail_gang(int64_t gang);
  // Every rank answered well: the attempt ends here and its members are
  // committing; returns them in rank order.
  std::vector<WorkerId> commit_gang(int64_t gang);
  bool draining(WorkerId w) const { return draining_.count(w) > 0; }
  bool gang_running(int64_t gang) const { return attempts_.count(gang) > 0; }

 private:
  struct Attempt {
    std::vector<WorkerId> members;
    std::vector<bool> replied;  // any answer (or none will come), by rank
    std::vector<bool> good;     // a good result, by rank
  };
  // w stops draining: back in the book (if still here) with its holdings.
  bool rejoin(WorkerId w);

  ExperimentControl& control_;
  std::set<WorkerId> present_;
  std::set<WorkerId> committing_;
  std::map<WorkerId, Leave> leaving_;                      // lost while committing
  std::map<WorkerId, std::vector<PartitionId>> draining_;  // out of the book, with their holdings
  std::map<int64_t, Attempt> attempts_;                    // running gang attempts
};

}  // namespace cerebro
