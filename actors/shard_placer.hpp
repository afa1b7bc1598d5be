#pragma once
// Sends an experiment's shards (partitions and the validation set) to the
// agents of a cluster, for the run follower (actors/run_follower): where they
// go is runtime/cluster/LiveCluster's decision, this only carries a
// placement out. Each agent is asked to hold one shard after another, from
// its local cache, a shared filesystem or the shard server (`source`, which
// serves the prepared files in chunks); the answer comes back asynchronously.

#include <functional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/experiment_runner.hpp"
#include "datasets/manifest.hpp"
#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"
#include "runtime/net/interfaces.hpp"

namespace cerebro {

class ShardPlacer {
 public:
  ShardPlacer() = default;
  // `data_dir` holds the prepared shards `manifest` lists; `source` serves them.
  ShardPlacer(std::string experiment, datasets::Manifest manifest, std::string data_dir, shard_server_actor source);

  // Asks `agent` to hold `partitions` and, with_validation, the validation
  // set, one after another; `done` gets ok once it holds all of them, or the
  // first failure ("placing <file> on <agent>: ...", with the agent's code,
  // unavailable when the agent gave none).
  void place(run_follower_actor::pointer self, const ClusterView::Agent& agent,
             const std::vector<PartitionId>& partitions, bool with_validation, std::function<void(Status)> done) const;

  // The files the shard server may serve: the partitions and the validation set.
  static std::vector<std::string> files_of(const datasets::Manifest& manifest);

 private:
  shard_placement placement(PartitionId id, const datasets::ShardInfo& shard) const;

  std::string experiment_;
  datasets::Manifest manifest_;
  std::string data_dir_;
  shard_server_actor source_;
};

}  // namespace cerebro
