#pragma once
// The run follower actor (run_follower_actor): what train() hands it, its
// state, and the helpers its two files share (actors/run_follower.cpp: the
// behaviour and train(); actors/run_follower_cluster.cpp: agents joining, lost,
// respawning workers). Internal to actors/, and to the deterministic actor
// tests, which spawn the behaviour with fakes around it.
//
// The decisions are runtime/cluster/LiveCluster's; the follower carries them
// out (placements through ShardPlacer, messages to the scheduler) and tells
// it what succeeded. Handles are kept here, by agent name.

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "actors/actors.hpp"
#include "actors/experiment_steering.hpp"
#include "actors/shard_placer.hpp"
#include "runtime/cluster/live_cluster.hpp"
#include "runtime/run/run_control.hpp"

namespace cerebro {

// What a run follower needs: the cluster it starts on, how to place shards,
// and the scheduler's configuration but for its workers and listener (the
// follower fills those in once the shards are placed).
struct follower_config {
  ClusterView cluster;
  int partitions = 0;
  int replication = 1;
  ShardPlacer placer;
  scheduler_config scheduler;
  // Answers steering requests (null: every request is refused).
  std::shared_ptr<ExperimentSteering> steering;
  // The workers of the live agents, for plans made elsewhere (run_setup.hpp).
  std::shared_ptr<std::atomic<int>> live_workers = std::make_shared<std::atomic<int>>(0);
  // Human lines, and each progress update with its workers' agents filled in.
  // Called on the follower's thread.
  Say say;
  std::function<void(progress_update&)> progress;
};

namespace follower_detail {

// A change of the cluster (a join, a loss, a respawn): runs, then calls its
// continuation once its placements and requests have answered.
using Then = std::function<void()>;
using Change = std::function<void(Then)>;

struct follower_state {
  follower_config config;
  std::optional<LiveCluster> cluster;
  std::map<std::string, ClusterView::Agent> agents;  // the live and joining agents' handles
  scheduler_actor scheduler;
  // Changes of the cluster take turns, each to its end before the next
  // begins, as the blocking loop they replace took them.
  bool changing = false;
  std::deque<Change> waiting;
  // The scheduler's outcome, and train()'s request for it.
  std::optional<experiment_done> outcome;
  std::optional<caf::typed_response_promise<experiment_done>> awaited;
  static inline const char* name = "cerebro.run_follower";

  void say(const std::string& line) const {
    if (config.say) config.say(line);
  }
};

using follower_ptr = run_follower_actor::stateful_pointer<follower_state>;

// --- run_follower_cluster.cpp
// Runs `change` now, or after the changes begun before it.
void begin_change(follower_ptr self, Change change);
// Places the shards of the start, agent after agent; `done` gets the first failure.
void place_start(follower_ptr self, size_t agent, std::function<void(Status)> done);
// The agents of the start take part: their workers join the scheduler's config.
void adopt_start(follower_ptr self);
void join_agent(follower_ptr self, const ClusterView::Agent& agent, Then then);
void lose_agent(follower_ptr self, std::string name, const std::string& why, Then then);
void lose_agent_at(follower_ptr self, const caf::actor_addr& source, const std::string& why, Then then);
void respawn(follower_ptr self, WorkerId id, const worker_actor& worker, Then then);

}  // namespace follower_detail

// The follower's behaviour (spawned detached by train(): steering reads the
// store, exports and runs pilot checks on its thread).
run_follower_actor::behavior_type run_follower(follower_detail::follower_ptr self, follower_config config);

}  // namespace cerebro
