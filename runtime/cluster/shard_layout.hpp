#pragma once
// Which agents hold which partitions of one experiment, and where partitions
// go: the first placement, a joining agent's share, and a new home for a
// partition whose every holder was lost. Plain decisions and bookkeeping;
// actors/shard_placer.cpp sends the placements and records what succeeded.
// Not thread safe: one owner.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/base/ids.hpp"

namespace cerebro {

class ShardLayout {
 public:
  // `partitions` partitions, each wanted on `replication` agents.
  ShardLayout(int partitions, int replication);

  // The first placement on `agents` agents: partition p on agents p, p+1, ...
  // (min(replication, agents) of them, round robin). Per agent, in order.
  std::vector<std::vector<PartitionId>> initial(size_t agents) const;
  // What an agent joining mid-run should hold when there are `agents_now`
  // (including it): an even share of all replicas, the partitions with the
  // fewest live holders first (then the lowest ids); in id order.
  std::vector<PartitionId> share_for_joining(size_t agents_now) const;
  // Of the `live` agents, the one holding the fewest partitions (the first
  // in `live`'s order on a tie): where an orphan goes. Empty if none is live.
  std::string emptiest(const std::vector<std::string>& live) const;

  // `agent` now holds `partition` (its placement succeeded).
  void placed(const std::string& agent, PartitionId partition);
  // The agent is gone: it holds nothing any more.
  void forget(const std::string& agent);
  // Partitions no live agent holds, in id order.
  std::vector<PartitionId> orphans() const;
  // The partitions an agent holds, in id order.
  std::vector<PartitionId> held_by(const std::string& agent) const;

 private:
  int replication_;
  std::map<PartitionId, std::set<std::string>> holders_;  // partition -> live agents holding it
};

}  // namespace cerebro
