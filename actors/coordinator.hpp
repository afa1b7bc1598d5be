#pragma once
// The coordinator: one published gateway actor. Agents join through it (token
// checked in constant time, resources validated, names unique among live
// agents) and only then learn a handle; clients submit experiments and ask for
// status through it with the same token. Experiments run here, on the agents'
// workers, with their state under the coordinator's state directory.
//
// The actor is a shell: its agents, experiments and every decision about
// them are runtime/cluster/coordinator_core.hpp's; the actor keeps only the
// handles (agents, run followers, clients, the reader of ended runs), keyed
// by agent id and experiment id. Each experiment runs in its own thread (a
// detached runner, see actors/experiment_runner.hpp), which reports to the
// coordinator by message (its lines, progress, the actor that follows the
// run, the end); the coordinator answers status and steering from what it
// was told.

#include <functional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/cluster/experiment_table.hpp"
#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/interfaces.hpp"
#include "runtime/net/messages.hpp"

namespace cerebro {

struct RunOptions;  // actors/experiment_runner.hpp
struct ClusterView;

// An unfinished run in the state directory (the coordinator was stopped or
// died while it ran): it waits for agents, then resumes.
// A run found in the state directory: unfinished (it resumes once agents join) or finished (its
// results stay readable: the API, the REPL, attach).
struct StoredRun {
  std::string id;
  ExperimentFacts facts;
  std::string run_dir;
  bool finished = false;
  int64_t units = 0;  // its committed units (a finished run's progress: all of them)
};

// What the coordinator starts and reads besides its own state. Left empty,
// each is production's (actors/coordinator_runs.hpp); tests put fakes here
// that train nothing, open no store and start no thread.
struct coordinator_parts {
  // Starts one experiment's runner, which reports to the gateway by message
  // (run_line, progress, run_started, run_ended).
  std::function<void(caf::local_actor* gateway, const RunOptions& options, const ClusterView& cluster)> start_run;
  // Spawns the reader of ended runs (it must end with the gateway).
  std::function<finished_run_reader_actor(caf::local_actor* gateway)> spawn_reader;
  // The unfinished runs in the state directory.
  std::function<std::vector<StoredRun>(const std::string& state_dir)> find_stored;
};

struct coordinator_config {
  std::string token;
  std::string state_dir;  // experiments/<id>/ run directories
  std::string listen;     // for status output
  // An agent without a heartbeat for this long is dropped from the cluster
  // (it rejoins when it answers again); experiments give up on it after
  // their own [cluster] heartbeat_timeout.
  double heartbeat_timeout_s = 10;
  // Its agents are all it will have (an embedded cluster: nothing else can
  // reach it to join): experiments run on a fixed cluster (ClusterView::fixed).
  bool fixed_agents = false;
  // The only places a spec may make it read (docs/CLUSTER.md "Data roots"), besides the files a
  // submission brought and, for warm_start, its own runs; empty: any file it can read.
  std::vector<std::string> data_roots;
  coordinator_parts parts;
};

// Its interface, coordinator_actor, is in runtime/net/interfaces.hpp (peers
// hold it: its handle crosses the network in join_reply).
coordinator_actor spawn_coordinator(caf::actor_system& system, coordinator_config config);

}  // namespace cerebro
