#pragma once
// Training a prepared run on a cluster (inside actors/, used by
// experiment_runner.cpp): places the shards, starts the scheduler and follows
// it until every config is done, handling agents that join, are lost or lose
// workers, and steering requests. Blocks the calling thread.

#include <caf/all.hpp>

#include "actors/run_setup.hpp"

namespace cerebro {

Result<experiment_done> train(caf::actor_system& system, const RunOptions& options, const ClusterView& cluster,
                              Prepared& r, const RunObserver& observer, const Say& say);

}  // namespace cerebro
