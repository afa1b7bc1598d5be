#include "actors/shard_placer.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "actors/actors.hpp"

namespace fs = std::filesystem;

namespace cerebro {

ShardPlacer::ShardPlacer(caf::scoped_actor& self, std::string experiment, const datasets::Manifest& manifest,
                         std::string data_dir, int replication)
    : self_(self),
      experiment_(std::move(experiment)),
      manifest_(manifest),
      data_dir_(std::move(data_dir)),
      replication_(replication) {
  std::vector<std::string> files;
  for (const auto& p : manifest.partitions) files.push_back(p.file);
  files.push_back(manifest.validation.file);
  source_ = spawn_shard_server(self->system(), experiment_, data_dir_, files);
  for (size_t p = 0; p < manifest.partitions.size(); ++p) holders_[static_cast<PartitionId>(p)];
}

ShardPlacer::~ShardPlacer() { self_->send_exit(source_, caf::exit_reason::user_shutdown); }

Result<std::vector<std::vector<PartitionId>>> ShardPlacer::place_all(const ClusterView& cluster) {
  auto agents = cluster.agents.size();
  std::vector<std::vector<PartitionId>> holds(agents);
  int copies = std::min<int>(replication_, static_cast<int>(agents));
  for (size_t p = 0; p < manifest_.partitions.size(); ++p)
    for (int r = 0; r < copies; ++r)
      holds[(p + static_cast<size_t>(r)) % agents].push_back(static_cast<PartitionId>(p));
  for (size_t a = 0; a < agents; ++a) {
    auto placed = place(cluster.agents[a], holds[a], true);
    if (!placed.ok()) return placed;
  }
  return holds;
}

Result<std::vector<PartitionId>> ShardPlacer::place_joining(const ClusterView::Agent& agent, size_t agents_now) {
  std::vector<std::pair<size_t, PartitionId>> by_holders;
  for (const auto& [p, holders] : holders_) by_holders.emplace_back(holders.size(), p);
  std::sort(by_holders.begin(), by_holders.end());
  auto total = manifest_.partitions.size() * static_cast<size_t>(std::max(1, replication_));
  auto share = std::max<size_t>(1, (total + agents_now - 1) / agents_now);
  std::vector<PartitionId> chosen;
  for (size_t i = 0; i < by_holders.size() && i < share; ++i) chosen.push_back(by_holders[i].second);
  std::sort(chosen.begin(), chosen.end());
  auto placed = place(agent, chosen, true);
  if (!placed.ok()) return placed;
  return chosen;
}

void ShardPlacer::forget(const std::string& agent_name) {
  for (auto& [p, holders] : holders_) holders.erase(agent_name);
}

std::vector<PartitionId> ShardPlacer::orphans() const {
  std::vector<PartitionId> out;
  for (const auto& [p, holders] : holders_)
    if (holders.empty()) out.push_back(p);
  return out;
}

std::vector<ShardPlacer::Replacement> ShardPlacer::place_orphans(
    const std::map<std::string, ClusterView::Agent>& live) {
  std::vector<Replacement> out;
  for (auto p : orphans()) {
    Replacement r{p, {}, {}};
    size_t fewest = SIZE_MAX;
    for (const auto& [candidate, agent] : live) {
      auto held = held_by(candidate).size();
      if (held < fewest) fewest = held, r.agent = candidate;
    }
    if (!r.agent.empty()) {
      auto placed = place(live.at(r.agent), {p}, false);
      if (!placed.ok()) r.error = placed.message();
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<PartitionId> ShardPlacer::held_by(const std::string& agent_name) const {
  std::vector<PartitionId> out;
  for (const auto& [p, holders] : holders_)
    if (holders.count(agent_name)) out.push_back(p);
  return out;
}

Status ShardPlacer::place(const ClusterView::Agent& agent, const std::vector<PartitionId>& partitions,
                          bool with_validation) {
  auto placement = [&](PartitionId id, const datasets::ShardInfo& shard) {
    return shard_placement{experiment_, id, shard.file, shard.bytes, shard.checksum,
                           (fs::path(data_dir_) / shard.file).string(), source_};
  };
  std::vector<shard_placement> todo;
  for (auto p : partitions) todo.push_back(placement(p, manifest_.partitions.at(static_cast<size_t>(p))));
  if (with_validation) todo.push_back(placement(validation_partition, manifest_.validation));
  Status failure;
  for (const auto& p : todo) {
    self_->request(agent.agent, caf::infinite, place_atom::value, p)
        .receive(
            [&](bool) {
              if (p.partition >= 0) holders_[p.partition].insert(agent.name);
            },
            [&](const caf::error& e) {
              failure = Status::error(
                  fmt::format("placing {} on {}: {}", p.file, agent.name, self_->system().render(e)));
            });
    if (!failure.ok()) return failure;
  }
  return Status::ok_status();
}

}  // namespace cerebro
