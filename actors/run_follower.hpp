#pragma once
// Training a prepared run on a cluster (inside actors/, used by
// experiment_runner.cpp): a run follower actor (run_follower_actor,
// actors/run_follower_shell.hpp) places the shards, starts the scheduler and
// follows it until every config is done, handling agents that join, are lost
// or lose workers, and steering requests. train() blocks the calling thread
// until the follower is done; the observer's callbacks run on the
// follower's thread meanwhile (`started` on the caller's, with the
// follower's handle).

#include <caf/all.hpp>

#include "actors/experiment_runner.hpp"
#include "models/run_setup.hpp"

namespace cerebro {

Result<experiment_done> train(caf::actor_system& system, const RunOptions& options, const ClusterView& cluster,
                              Prepared& r, const RunObserver& observer, const Say& say);

}  // namespace cerebro
