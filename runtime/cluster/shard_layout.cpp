#include "runtime/cluster/shard_layout.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace cerebro {

ShardLayout::ShardLayout(int partitions, int replication) : replication_(replication) {
  for (PartitionId p = 0; p < partitions; ++p) holders_[p];
}

std::vector<std::vector<PartitionId>> ShardLayout::initial(size_t agents) const {
  std::vector<std::vector<PartitionId>> holds(agents);
  if (agents == 0) return holds;
  int copies = std::min<int>(replication_, static_cast<int>(agents));
  for (const auto& [p, holders] : holders_)
    for (int r = 0; r < copies; ++r) holds[(static_cast<size_t>(p) + static_cast<size_t>(r)) % agents].push_back(p);
  return holds;
}

std::vector<PartitionId> ShardLayout::share_for_joining(size_t agents_now) const {
  std::vector<std::pair<size_t, PartitionId>> by_holders;
  for (const auto& [p, holders] : holders_) by_holders.emplace_back(holders.size(), p);
  std::sort(by_holders.begin(), by_holders.end());
  auto total = holders_.size() * static_cast<size_t>(std::max(1, replication_));
  auto share = std::max<size_t>(1, (total + agents_now - 1) / std::max<size_t>(1, agents_now));
  std::vector<PartitionId> chosen;
  for (size_t i = 0; i < by_holders.size() && i < share; ++i) chosen.push_back(by_holders[i].second);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::string ShardLayout::emptiest(const std::vector<std::string>& live) const {
  std::string chosen;
  size_t fewest = SIZE_MAX;
  for (const auto& candidate : live) {
    auto held = held_by(candidate).size();
    if (held < fewest) fewest = held, chosen = candidate;
  }
  return chosen;
}

void ShardLayout::placed(const std::string& agent, PartitionId partition) { holders_[partition].insert(agent); }

void ShardLayout::forget(const std::string& agent) {
  for (auto& [p, holders] : holders_) holders.erase(agent);
}

std::vector<PartitionId> ShardLayout::orphans() const {
  std::vector<PartitionId> out;
  for (const auto& [p, holders] : holders_)
    if (holders.empty()) out.push_back(p);
  return out;
}

std::vector<PartitionId> ShardLayout::held_by(const std::string& agent) const {
  std::vector<PartitionId> out;
  for (const auto& [p, holders] : holders_)
    if (holders.count(agent)) out.push_back(p);
  return out;
}

}  // namespace cerebro
