#pragma once
// Runs one experiment on an embedded cluster: the same scheduler, worker,
// data-partition and checkpoint actors a multi-node cluster uses, with every
// agent inside this process. Owns the run directory's life: setup errors
// leave nothing behind; a finished run leaves summary.json, metrics.csv, the
// best model, the prepared data and the RocksDB state.

#include <functional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include <nlohmann/json.hpp>

#include "datasets/manifest.hpp"
#include "datasets/prepared_cache.hpp"
#include "actors/system_config.hpp"
#include "runtime/net/interfaces.hpp"
#include "runtime/net/messages.hpp"
#include "runtime/run/run_options.hpp"
#include "runtime/run/run_recovery.hpp"  // spec_of_run
#include "runtime/spec/spec.hpp"
#include "runtime/store/state_store.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

// Receives human lines during setup (`line`) and progress during training.
struct RunObserver {
  std::function<void(const std::string& line)> line;
  std::function<void(const progress_update& update)> progress;
  // Called once training starts with the actor that follows the run: send it
  // (join_atom, name, agent, workers) to add a node that joined mid-run.
  std::function<void(run_follower_actor follower)> started;
};

// The agents an experiment runs on: each with its workers.
struct ClusterView {
  struct Agent {
    std::string name;
    agent_actor agent;
    std::vector<worker_actor> workers;
  };
  std::vector<Agent> agents;
  // No agent can join while the experiment runs (an embedded cluster: its
  // workers are all it will have; a worker that dies is respawned). A
  // pipeline config with more stages than workers then fails rather than
  // waits.
  bool fixed = false;
  int total_workers() const {
    int n = 0;
    for (const auto& a : agents) n += static_cast<int>(a.workers.size());
    return n;
  }
};

// Runs the experiment on `cluster` inside `system` (blocking the calling
// thread); returns the summary (also written as summary.json).
Result<nlohmann::json> run_experiment(caf::actor_system& system, const RunOptions& options, const ClusterView& cluster,
                                      const RunObserver& observer);

// Runs the experiment on an embedded cluster: one agent with the workers,
// inside a fresh actor system in this process.
Result<nlohmann::json> run_embedded(const RunOptions& options, const RunObserver& observer);

}  // namespace cerebro
