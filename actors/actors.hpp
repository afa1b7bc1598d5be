#pragma once
// The actor shells of the MOP runtime. Each is a thin layer over a plain class
// (ExperimentControl, StateStore, the models/ trainer) that routes typed
// messages (runtime/messages.hpp) and owns lifetimes. Work that blocks
// (training, synced RocksDB writes) runs in detached actors so it never stalls
// CAF's scheduler threads.

#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "datasets/dataset.hpp"
#include "models/unit_trainer.hpp"
#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/net/cluster_messages.hpp"
#include "runtime/net/messages.hpp"
#include "runtime/store/state_store.hpp"

namespace cerebro {

// A partition lent by a data-partition actor to a worker of the same process:
// a reference to the partition's memory, never a copy. Local only (peers on
// other nodes receive shards in chunks instead).
struct partition_lease {
  PartitionId partition = 0;
  std::shared_ptr<const datasets::Dataset> data;
};

}  // namespace cerebro

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cerebro::partition_lease)

namespace cerebro {

// The validation set is served like a partition under this id.
constexpr PartitionId validation_partition = -1;

// Owns one partition's tensors; answers (borrow_atom) with a partition_lease.
caf::actor spawn_data_partition(caf::actor_system& system, PartitionId id,
                                std::shared_ptr<const datasets::Dataset> data);

struct worker_config {
  WorkerId id = 0;
  // The node's agent: lends partitions, (borrow_atom, experiment, partition)
  // -> partition_lease.
  caf::actor directory;
};

// Trains one unit at a time: (train_atom, unit_task) -> unit_result;
// (release_atom, experiment) drops its leases of that experiment.
// Detached: training blocks for seconds.
caf::actor spawn_worker(caf::actor_system& system, worker_config config);

// Persists completed units and answers for latest states:
//   (commit_atom, unit_result, uint64_t seed, double start_s, double end_s) -> UnitLogEntry JSON string
//   (latest_atom, ConfigId) -> StateBytes
//   (copy_atom, from, from_epoch, to, params JSON) -> bool   (PBT exploit)
//   (decision_atom, decision JSON) -> bool                   (search decisions)
// Detached: commits are synced writes.
caf::actor spawn_checkpoint(caf::actor_system& system, std::shared_ptr<StateStore> store);

// A node agent: hosts workers and the node's data-partition actors.
//   (borrow_atom, experiment, partition) -> partition_lease   (local workers)
//   (place_atom, shard_placement) -> bool: hold that shard (from the local
//       cache, a shared filesystem, or fetched in bounded chunks from
//       placement.source), verified against its checksum
//   (release_atom, experiment): drop the experiment's partitions
struct agent_config {
  std::string name;
  std::string data_dir;            // shard cache: <data_dir>/<experiment>/<file>
  int workers = 1;
  bool shared_filesystem = false;  // may read placement.local_path directly
};

struct agent_handles {
  caf::actor agent;
  std::vector<caf::actor> workers;
};

agent_handles spawn_agent(caf::actor_system& system, agent_config config);

// Serves one experiment's shard files to agents in bounded chunks:
//   (fetch_atom, experiment, file, int64 offset, int64 length) -> std::string
// Only files named in `files` are served; length is capped at max_chunk_bytes.
constexpr int64_t max_chunk_bytes = 1 << 20;
caf::actor spawn_shard_server(caf::actor_system& system, std::string experiment, std::string data_dir,
                              std::vector<std::string> files);

struct scheduler_config {
  std::shared_ptr<ExperimentControl> control;
  std::string experiment;
  models::ShapeInfo shape;
  std::map<ConfigId, std::string> params_json;
  std::vector<std::pair<WorkerId, caf::actor>> workers;  // holdings are in control
  caf::actor checkpoint;
  caf::actor listener;  // receives (progress_atom, progress_update) and (done_atom, experiment_done)
  // The run's clock starts here: a resumed run goes on from where its unit
  // log ends, so times in the log stay ordered across restarts.
  double clock_offset_s = 0;
};

// Owns the experiment's unit queue (through ExperimentControl); started with
// (start_atom). Monitors the workers: a worker that dies has its unit requeued.
// (add_worker_atom, WorkerId, worker, holds) adds a worker mid-run.
caf::actor spawn_scheduler(caf::actor_system& system, scheduler_config config);

}  // namespace cerebro
