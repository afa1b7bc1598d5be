#pragma once
// The actor shells of the MOP runtime. Each is a thin layer over a plain class
// (ExperimentControl, StateStore, the models/ trainer) that routes typed
// messages (runtime/base/messages.hpp) and owns lifetimes. Every message each
// one takes is in its typed interface (runtime/net/interfaces.hpp). Work that
// blocks (training, synced RocksDB writes) runs in detached actors so it never
// stalls CAF's scheduler threads.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "datasets/dataset.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/gang_messages.hpp"
#include "runtime/net/interfaces.hpp"
#include "runtime/net/messages.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

// The validation set is served like a partition under this id.
constexpr PartitionId validation_partition = -1;

// Owns one partition's tensors and lends them (data_partition_actor).
data_partition_actor spawn_data_partition(caf::actor_system& system, PartitionId id,
                                          std::shared_ptr<const datasets::Dataset> data);

struct worker_config {
  WorkerId id = 0;
  // The node's agent: lends partitions.
  agent_actor directory;
  // The node's cluster address: a data-parallel gang's Gloo sockets bind to
  // it, only for the gang's lifetime.
  std::string gang_address = "127.0.0.1";
};

// Trains one unit at a time (worker_actor). Detached: training blocks for
// seconds.
worker_actor spawn_worker(caf::actor_system& system, worker_config config);

// The key-value board of data-parallel gangs' rendezvous (rendezvous_actor,
// over runtime/cluster/RendezvousBoard), spawned by the scheduler.
rendezvous_actor spawn_rendezvous_board(caf::actor_system& system);

// Persists completed units and answers for latest states (checkpoint_actor).
// Detached: commits are synced writes.
checkpoint_actor spawn_checkpoint(caf::actor_system& system, std::shared_ptr<StateStore> store);

// A node agent (agent_actor): hosts workers and the node's data-partition
// actors.
struct agent_config {
  std::string name;
  std::string data_dir;  // shard cache: <data_dir>/<experiment>/<file>
  int workers = 1;
  bool shared_filesystem = false;  // may read placement.local_path directly
  // Memory budget for the shards this node holds (0: no limit). Shards are
  // read into memory while they fit; the rest stay in their files, memory-
  // mapped (out of core), so the node's anonymous memory stays within it.
  int64_t memory_budget_bytes = 0;
  // The address its workers' gang sockets bind to: loopback for
  // an embedded run, the agent's advertised host (`--gang-address`) on a cluster.
  std::string gang_address = "127.0.0.1";
};

struct agent_handles {
  agent_actor agent;
  std::vector<worker_actor> workers;
};

agent_handles spawn_agent(caf::actor_system& system, agent_config config);

// Serves one experiment's shard files to agents in bounded chunks
// (shard_server_actor). Only files named in `files` are served; length is
// capped at max_chunk_bytes.
constexpr int64_t max_chunk_bytes = 1 << 20;
shard_server_actor spawn_shard_server(caf::actor_system& system, std::string experiment, std::string data_dir,
                                      std::vector<std::string> files);

struct scheduler_config {
  std::shared_ptr<ExperimentControl> control;
  std::string experiment;
  models::ShapeInfo shape;
  datasets::Augmentation augmentation;          // of every unit's training batches
  bool read_ahead = false;                      // [data] read_ahead, for every unit (unit_task::read_ahead)
  std::map<ConfigId, std::string> params_json;  // JSON text, see unit_task::params_json
  // Makes a config the search proposes (tpe) durable: its initial state
  // (with its pilot check) and record; an error rejects it. Returns the
  // stages it trains over (1: whole; >= 2: a pipeline, already in the
  // store's meta), which the scheduler sets in the control before the config
  // joins the schedule. Runs on the scheduler's thread (a small model's
  // initialisation: milliseconds).
  std::function<Result<int32_t>(ConfigId, const nlohmann::json&)> create_config;
  std::vector<std::pair<WorkerId, worker_actor>> workers;  // holdings are in control
  checkpoint_actor checkpoint;
  scheduler_listener_actor listener;
  // The run's clock starts here: a resumed run goes on from where its unit
  // log ends, so times in the log stay ordered across restarts.
  double clock_offset_s = 0;
  // Data-parallel gangs: a rank waits this long for its peers
  // (rendezvous, every allreduce) before the attempt fails ([cluster]
  // heartbeat_timeout: a peer hung that long is lost).
  double gang_timeout_s = 10;
};

// Owns the experiment's unit queue (through ExperimentControl); started with
// (start_atom). Monitors the workers: a worker that dies has its unit requeued.
scheduler_actor spawn_scheduler(caf::actor_system& system, scheduler_config config);

}  // namespace cerebro
