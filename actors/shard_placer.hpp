#pragma once
// Places an experiment's shards (partitions and the validation set) on the
// agents of a cluster: the shell that sends the placements, around
// runtime/cluster/shard_layout.hpp, which decides where they go and remembers
// which agent holds which partition. The scheduler's availability map comes
// from here, and so does the repair when agents are lost (a partition whose
// every holder died is placed again on a live agent, from the coordinator's
// prepared copy).

#include <map>
#include <set>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/experiment_runner.hpp"
#include "datasets/manifest.hpp"
#include "runtime/net/interfaces.hpp"
#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"
#include "runtime/cluster/shard_layout.hpp"

namespace cerebro {

class ShardPlacer {
 public:
  // `data_dir` holds the prepared shards; a shard server actor serves them to
  // agents in chunks for as long as the placer lives.
  ShardPlacer(caf::scoped_actor& self, std::string experiment, const datasets::Manifest& manifest,
              std::string data_dir, int replication);
  ~ShardPlacer();
  ShardPlacer(const ShardPlacer&) = delete;
  ShardPlacer& operator=(const ShardPlacer&) = delete;

  // The initial placement: partition p on agents p, p+1, ... (replication of
  // them, round robin); the validation set on every agent. Returns the
  // partitions of each agent, in the cluster's order.
  Result<std::vector<std::vector<PartitionId>>> place_all(const ClusterView& cluster);

  // A node that joins mid-run gets an even share of replicas, the partitions
  // with the fewest live holders first.
  Result<std::vector<PartitionId>> place_joining(const ClusterView::Agent& agent, size_t agents_now);

  // The agent is gone: it holds nothing any more.
  void forget(const std::string& agent_name);
  // Partitions no live agent holds.
  std::vector<PartitionId> orphans() const { return layout_.orphans(); }
  // Places every orphan again, from the prepared copy, on the live agent
  // holding the fewest partitions; if that placement fails, on the next
  // emptiest, and so on. One outcome per orphan: `agent` is where it went
  // (empty when no live agent took it) and `error` says which placements
  // failed (empty when none did).
  struct Replacement {
    PartitionId partition = 0;
    std::string agent;
    std::string error;
  };
  std::vector<Replacement> place_orphans(const std::map<std::string, ClusterView::Agent>& live);
  // The partitions an agent holds.
  std::vector<PartitionId> held_by(const std::string& agent_name) const { return layout_.held_by(agent_name); }

 private:
  Status place(const ClusterView::Agent& agent, const std::vector<PartitionId>& partitions, bool with_validation);

  caf::scoped_actor& self_;
  std::string experiment_;
  const datasets::Manifest& manifest_;
  std::string data_dir_;
  shard_server_actor source_;
  ShardLayout layout_;
};

}  // namespace cerebro
