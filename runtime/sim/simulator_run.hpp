#pragma once
// The simulator's run (runtime/sim/simulator.hpp): one Simulator::run(), its
// state and its handlers. Private to runtime/sim, split along the seams the
// code names: the event loop, the MOP dispatch and the Hyperband rung
// barriers in simulator_run.cpp; data-parallel gangs in
// simulator_gangs.cpp; the decision-latency clock in latency_histogram.hpp;
// the public entry points in simulator.cpp.

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "runtime/scheduling/gang_planner.hpp"
#include "runtime/scheduling/mop_book.hpp"
#include "runtime/scheduling/partition_set.hpp"
#include "runtime/sim/event_queue.hpp"
#include "runtime/sim/latency_histogram.hpp"
#include "runtime/sim/simulator.hpp"

namespace cerebro {

class Simulator::Run {
 public:
  Run(const SimulationOptions& options, const Workload& workload, SchedulingPolicy& policy);
  Result<SimulationReport> execute();

 private:
  // Lists of ids (per partition or per worker) in one array.
  class Lists {
   public:
    struct Range {
      const int32_t* first;
      const int32_t* last;
      const int32_t* begin() const { return first; }
      const int32_t* end() const { return last; }
    };
    Lists() = default;
    explicit Lists(const std::vector<std::vector<int32_t>>& lists) {
      offsets_.push_back(0);
      for (const std::vector<int32_t>& list : lists) {
        items_.insert(items_.end(), list.begin(), list.end());
        offsets_.push_back(static_cast<int32_t>(items_.size()));
      }
    }
    Range of(int32_t i) const { return Range{items_.data() + offsets_[i], items_.data() + offsets_[i + 1]}; }

   private:
    std::vector<int32_t> offsets_;
    std::vector<int32_t> items_;
  };

  // A worker has at most one event pending: its kind is kept per worker.
  enum class EventKind : uint8_t { unit_ends, worker_fails, worker_returns };
  struct Attempt {
    Unit unit;
    double start_s = 0;
    double duration_s = 0;  // as planned; a failure cuts it short
    int64_t gang = 0;       // > 0: a gang's id; the gang's event is its first member's
  };
  // Per (bracket, rung end): configs expected there, arrived, and the promoted ones held.
  struct Rung {
    int32_t expected = 0;
    int32_t arrived = 0;
    std::vector<ConfigId> held;
  };

  void push(double time, WorkerId w, EventKind kind) {
    next_event_[w] = kind;
    events_.push(time, static_cast<uint32_t>(w));
  }

  // The next event is worker w's: while this one is handled, fetch what its
  // unit's end will touch (the config's entries in the book and the policy),
  // which at 10,000 configs are rarely still in cache.
  void prefetch_for(WorkerId w) const {
    if (next_event_[w] != EventKind::unit_ends) return;
    const Unit& u = attempts_[w].unit;
    book_.prefetch(u.config);
    policy_.prefetch_observation(w, u);
  }

  // Whether w may have an eligible unit (false: it certainly has none).
  bool may_have_work(WorkerId w) const {
    for (PartitionId p : holdings_.of(w)) {
      if (may_have_idle_needer_.contains(p)) return true;
    }
    return false;
  }

  void record(WorkerId w, const Attempt& a, bool committed, int32_t gang_size = 0) {
    if (!options_.keep_log) return;
    report_.log.push_back(
        UnitRecord{a.unit.config, a.unit.partition, a.unit.epoch, w, a.start_s, now_, committed, a.gang, gang_size});
  }

  // simulator_run.cpp: the MOP dispatch and the event handlers.
  // Idle worker w asks the policy; it starts the unit chosen or waits.
  bool offer(WorkerId w);
  void set_waiting(WorkerId w, bool waiting);
  // Worker w has just become free: unless a wake-up already gave it work, it
  // is offered a unit, or waits when none of its partitions can have one.
  void offer_or_wait(WorkerId w);
  // Config c is idle again: a waiting holder of a partition it needs may take
  // it; if none does, its partitions may have an idle needer from now on.
  void wake_for(ConfigId c);
  // Config c's epoch ended: the search decides. Fixed epochs: always go on
  // (the book finishes it after its planned epochs). Hyperband: a config
  // promoted past a rung barrier waits for its bracket there.
  void epoch_ended(ConfigId c);
  void unit_ends(WorkerId w);
  void worker_fails(WorkerId w);

  // simulator_gangs.cpp: data-parallel gangs (only with a planner).
  // Waiting workers that hold a partition config c still needs this epoch,
  // a few per gang seat, in partition order: the gang's candidates.
  std::vector<WorkerId> gang_candidates(WorkerId w, ConfigId c);
  // The planner may turn u on w into a gang: started here (true) or not (false).
  bool start_gang(WorkerId w, const Unit& u);
  void gang_ends(WorkerId leader);
  // The members of the gang led by `leader`, taken out of its attempt, with
  // the gang's worker time counted; `attempt` is the leader's.
  std::vector<MopBook::GangMember> take_gang(WorkerId leader, Attempt& attempt);
  // A member of the gang led by `leader` failed mid-attempt: nothing of the
  // gang counts, every unit is pending again, the member's worker is away.
  void gang_fails(WorkerId leader);

  const SimulationOptions& options_;
  const Workload& workload_;
  SchedulingPolicy& policy_;
  std::mt19937_64 rng_;
  MopBook book_;
  EventQueue events_;
  std::vector<EventKind> next_event_;  // per worker: what its pending event is
  double now_ = 0;
  double busy_s_ = 0;
  std::vector<Attempt> attempts_;         // per worker, its current attempt
  std::vector<char> waiting_;             // per worker: idle, and got nothing or certainly had nothing
  std::vector<int32_t> waiting_holders_;  // per partition
  PartitionSet waiting_partitions_;       // partitions with a waiting holder
  // workload_.holders and .holdings flattened: one array each, not one
  // allocation per partition or worker (the loop reads them after every unit).
  Lists holders_, holdings_;
  // A superset of the partitions some idle pending_epoch config needs.
  PartitionSet may_have_idle_needer_;
  LatencyHistogram latencies_;
  int64_t latency_every_ = 1;  // decisions: every latency_every_-th is timed
  SimulationReport report_;
  std::optional<GangPlanner> planner_;  // unless parallelism is mop
  // Per worker leading a gang, its members (the leader first); empty otherwise.
  std::vector<std::vector<MopBook::GangMember>> gang_members_;
  int64_t gang_count_ = 0;
  // Per bracket: rung end (epochs) -> its barrier.
  std::vector<std::map<int32_t, Rung>> rung_waiting_;
};

}  // namespace cerebro
