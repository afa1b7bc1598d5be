#pragma once
// The agents of a running experiment as its follower (actors/run_follower)
// sees them, and what happens when they come and go: which agents are live,
// the scheduler's ids of their workers (never reused, so a late message
// names one worker), which hold which partitions (a ShardLayout), and the
// decisions:
//
//  - the start: where each partition goes (replication of them, round robin);
//  - an agent joining mid-run (or coming back): its share of replicas, placed
//    before its workers take units; if its placement fails it takes no part;
//  - an agent lost (dead or hung): its workers leave the schedule, and each
//    partition no live agent holds any more (an orphan) is placed again, from
//    the prepared copy, on the live agent holding the fewest partitions; if
//    that placement fails, on the next emptiest, and so on;
//  - a worker that died on its own: its agent respawns it under a fresh id.
//
// The follower carries the decisions out (placements, messages to the
// scheduler) and reports back what succeeded. Handles stay in the shell,
// keyed by the agents' names. Not thread safe: one owner.

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"
#include "runtime/cluster/shard_layout.hpp"

namespace cerebro {

class LiveCluster {
 public:
  // `partitions` partitions, each wanted on `replication` agents.
  LiveCluster(int partitions, int replication);

  // The replication a run uses on `agents` agents: the spec's when set
  // (> 0), else 2 where there are two agents or more.
  static int replication_for(int spec_replication, int agents);

  // --- The start.
  // Per agent of the start, in order: the partitions it should hold
  // (partition p on agents p, p+1, ..., replication of them).
  std::vector<std::vector<PartitionId>> initial_placement(size_t agents) const { return layout_.initial(agents); }
  // An agent of the start, its placement done: it holds `partitions` and is
  // live with `workers` workers. Returns their ids, in order.
  std::vector<WorkerId> add_agent(const std::string& name, const std::vector<PartitionId>& partitions, int workers);

  // --- An agent joins mid-run.
  // `name` (not live: a live one of that name is lost first, as it joined
  // again) joins with `workers` workers: the partitions it should hold (an
  // even share of all replicas, counting it, those with the fewest live
  // holders first). It counts as an agent from now on; its workers take
  // units once its placement succeeded (joined) or never (join_failed).
  std::vector<PartitionId> begin_join(const std::string& name, int workers);
  // Its placement succeeded: it holds its share, and its workers get ids
  // (returned in order). Empty if it is no longer joining (lost meanwhile).
  std::vector<WorkerId> joined(const std::string& name);
  // Its placement failed: it takes no part in the run (no units, no orphan,
  // no count in plans), and what it took before the failure is forgotten. If
  // it joins again it is tried again.
  void join_failed(const std::string& name);

  // --- An agent is lost.
  struct Loss {
    std::vector<WorkerId> workers;     // leave the schedule
    std::vector<PartitionId> orphans;  // no live agent holds them any more
  };
  // `name` (live or joining) is gone: it holds nothing any more, and a repair
  // of the orphans starts (next_repair). Nullopt if it was not live.
  std::optional<Loss> lose(const std::string& name);

  // --- The repair of orphans after a loss, one placement at a time.
  struct PlacementTry {
    PartitionId partition = 0;
    std::string agent;
  };
  // An orphan's outcome: `agent` is where it went (empty when no live agent
  // took it) and `error` says which placements failed (empty when none did).
  struct Replacement {
    PartitionId partition = 0;
    std::string agent;
    std::string error;
  };
  // The next placement to try: the current orphan on the live agent holding
  // the fewest partitions among those not tried for it yet. Nullopt when the
  // repair is over. An orphan no live agent is left to try is decided without
  // a placement (see take_repaired).
  std::optional<PlacementTry> next_repair();
  // How that placement went (ok, or the failure to add to the orphan's error).
  void repair_tried(const PlacementTry& attempt, const Status& result);
  // The orphans decided since the last call, in order.
  std::vector<Replacement> take_repaired();

  // --- A worker died on its own.
  // The live agent that hosts worker `dead` and can respawn it, if any.
  std::optional<std::string> respawner(WorkerId dead) const;
  // Agent `name` respawned a worker: its id (nullopt if `name` is no longer live).
  std::optional<WorkerId> respawned(const std::string& name);

  // --- Views.
  bool live(const std::string& name) const;
  bool joining(const std::string& name) const;
  // The live agents' names, in order (joining ones are not live yet).
  std::vector<std::string> live_agents() const;
  // The agent of worker `id`, "?" if none is known.
  std::string agent_of(WorkerId id) const;
  std::vector<WorkerId> workers_of(const std::string& name) const;
  std::vector<PartitionId> held_by(const std::string& name) const { return layout_.held_by(name); }
  // The workers of the live agents (a respawned worker replaces its dead one).
  int worker_count() const;

 private:
  struct Agent {
    int workers = 0;
    bool joined = false;  // false while its placement is under way
    std::vector<PartitionId> share;
  };
  WorkerId add_worker(const std::string& agent);

  ShardLayout layout_;
  std::map<std::string, Agent> agents_;
  std::map<WorkerId, std::string> agent_of_;
  WorkerId next_worker_ = 0;
  // The repair under way: orphans left (the first is being placed), the
  // agents already tried for it and what failed.
  std::deque<PartitionId> orphans_;
  std::set<std::string> tried_;
  std::string repair_error_;
  std::vector<Replacement> repaired_;
};

}  // namespace cerebro
