#pragma once
// The API for programs that embed cerebro in their own caf::actor_system
// (docs/EMBEDDING.md). In short:
//
//   caf::actor_system_config config;
//   cerebro::configure_actor_system(config);   // message types + middleman
//   caf::actor_system system(config);
//   cerebro::LocalCluster cluster(system, {/*workers=*/2, "/var/lib/svc/cerebro"});
//   auto spec = cerebro::SpecBuilder("demo").data_source("mine") ... .build();
//   cluster.submit({*spec, "demo-1", "/var/lib/svc/runs/demo-1"}, my_listener);
//
// `my_listener` (an experiment_listener_actor, runtime/net/interfaces.hpp:
// an actor of that interface, or caf::actor_cast of a scoped_actor) then receives
//   (cerebro::progress_atom, std::string experiment, cerebro::progress_update)
//     for setup lines (only `event` set) and after each committed unit/epoch,
//   (cerebro::done_atom, std::string experiment, cerebro::experiment_result)
//     once, when the experiment finished or failed.
// Custom models: models/model.hpp (register_model). Custom data:
// datasets/dataset_source.hpp (register_dataset_source).
//
// An AttachedCluster gives the same contract for a remote coordinator and its
// agents (cerebro coordinator / cerebro agent):
//
//   auto cluster = cerebro::AttachedCluster::connect(system, {{"10.0.0.5", 7070}, token});
//   if (!cluster.ok()) ...;  // unreachable, or a wrong token
//   (*cluster)->submit({*spec, "demo-1", "/var/lib/svc/runs/demo-1"}, my_listener);

#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/client.hpp"
#include "datasets/dataset_source.hpp"
#include "runtime/store/experiment_result.hpp"
#include "runtime/net/interfaces.hpp"
#include "runtime/net/messages.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/spec/spec_builder.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

// Registers every message type cerebro's actors exchange (and
// experiment_result) with `config` and, unless the caller loads it itself,
// CAF's middleman (needed to reach agents and coordinators on other nodes).
// Also sets the process's allocator for training (models::configure_allocator,
// docs/EMBEDDING.md). Call before constructing the actor_system.
void configure_actor_system(caf::actor_system_config& config, bool load_middleman = true);

struct LocalClusterOptions {
  int workers = 0;       // training workers in this process; 0 = one per core
  std::string work_dir;  // the agent's shard cache (<work_dir>/agent); required
};

// What to run: the spec (SpecBuilder or parse_spec_file), a name for this
// run's partitions on the agents, and the run directory, which must not exist
// or be empty. A finished run leaves summary.json, metrics.csv, best_model.pt,
// the prepared data and the RocksDB state there.
struct ExperimentRequest {
  ExperimentSpec spec;
  std::string experiment_id;
  std::string run_dir;
};

// What LocalCluster and AttachedCluster have in common, for programs that
// choose where experiments run at start-up.
class ExperimentCluster {
 public:
  virtual ~ExperimentCluster() = default;

  // Runs the experiment on the calling thread and returns when it is done.
  // Progress goes to `listener` when it is set. Do not call from inside an
  // actor's handler: it blocks the thread (use submit there).
  virtual Result<experiment_result> run(const ExperimentRequest& request,
                                        const experiment_listener_actor& listener = {}) = 0;

  // Returns at once; `listener` receives progress and then the
  // experiment_result (see the top of this file), also when the request fails.
  // Without a listener the run directory is the only record.
  virtual void submit(ExperimentRequest request, experiment_listener_actor listener) = 0;
};

// A local cluster: one agent with its training workers inside the caller's
// actor system, and no coordinator: the caller submits to it directly. The
// same scheduler, worker, data-partition and checkpoint actors as a
// multi-node cluster.
// Experiments run one at a time, in the order they reach the cluster.
// Thread-safe. Destruction waits until no experiment is running; submitted
// experiments that had not started by then fail with "the local cluster was
// stopped" (their listeners still get the result).
class LocalCluster : public ExperimentCluster {
 public:
  // Spawns the agent and workers in `system`, which must outlive the cluster
  // and have been configured with configure_actor_system.
  LocalCluster(caf::actor_system& system, LocalClusterOptions options);
  ~LocalCluster();
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  int workers() const;

  Result<experiment_result> run(const ExperimentRequest& request,
                                const experiment_listener_actor& listener = {}) override;
  void submit(ExperimentRequest request, experiment_listener_actor listener) override;

  struct Shared;  // what the runs share with the cluster; defined in the .cpp

 private:
  caf::actor_system& system_;
  std::shared_ptr<Shared> shared_;
};

struct AttachedClusterOptions {
  GatewayAddress coordinator;     // where `cerebro coordinator --listen` listens
  std::string token;              // the cluster's token (the token file's text, without the newline)
  double connect_timeout_s = 30;  // how long to retry an unreachable coordinator
};

// A remote cluster: a coordinator and its agents, reached from the caller's
// actor system (configured with the middleman). The coordinator reads the
// data and prepares the partitions on its own filesystem, so a spec's data
// paths are the coordinator's, and a data source registered in this process
// cannot be used: run() refuses such a request (use a LocalCluster).
// Experiments run concurrently when the coordinator has room; the listener's
// messages and the result carry the request's experiment_id (the
// coordinator's own id appears in the first progress event). A finished run's
// directory receives the files the coordinator sends back: summary.json,
// metrics.csv, best_model.pt, spec.toml (the data and state stay on the
// coordinator). A lost coordinator does not end a run: it is followed again
// after a restart (Client::reconnect_timeout_s).
// Thread-safe; each run has a connection of its own. Destroying the cluster
// does not stop submitted experiments.
class AttachedCluster : public ExperimentCluster {
 public:
  // Reaches the coordinator and checks the token. `system` must outlive the
  // cluster and the experiments submitted to it.
  static Result<std::unique_ptr<AttachedCluster>> connect(caf::actor_system& system, AttachedClusterOptions options);

  // "host:port" of the coordinator.
  std::string where() const;

  Result<experiment_result> run(const ExperimentRequest& request,
                                const experiment_listener_actor& listener = {}) override;
  void submit(ExperimentRequest request, experiment_listener_actor listener) override;

 private:
  AttachedCluster(caf::actor_system& system, AttachedClusterOptions options);

  caf::actor_system& system_;
  AttachedClusterOptions options_;
};

}  // namespace cerebro
