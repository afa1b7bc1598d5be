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
      layout_(static_cast<int>(manifest.partitions.size()), replication) {
  std::vector<std::string> files;
  for (const auto& p : manifest.partitions) files.push_back(p.file);
  files.push_back(manifest.validation.file);
  source_ = spawn_shard_server(self->system(), experiment_, data_dir_, files);
}

ShardPlacer::~ShardPlacer() { self_->send_exit(source_, caf::exit_reason::user_shutdown); }

Result<std::vector<std::vector<PartitionId>>> ShardPlacer::place_all(const ClusterView& cluster) {
  auto holds = layout_.initial(cluster.agents.size());
  for (size_t a = 0; a < cluster.agents.size(); ++a) {
    auto placed = place(cluster.agents[a], holds[a], true);
    if (!placed.ok()) return placed;
  }
  return holds;
}

Result<std::vector<PartitionId>> ShardPlacer::place_joining(const ClusterView::Agent& agent, size_t agents_now) {
  auto chosen = layout_.share_for_joining(agents_now);
  auto placed = place(agent, chosen, true);
  if (!placed.ok()) return placed;
  return chosen;
}

void ShardPlacer::forget(const std::string& agent_name) { layout_.forget(agent_name); }

std::vector<ShardPlacer::Replacement> ShardPlacer::place_orphans(
    const std::map<std::string, ClusterView::Agent>& live) {
  std::vector<std::string> names;
  for (const auto& [name, agent] : live) names.push_back(name);
  std::vector<Replacement> out;
  for (auto p : layout_.orphans()) {
    Replacement r{p, {}, {}};
    // An agent that cannot take it (its disk full, its cache unwritable)
    // must not leave the partition without a holder while another could.
    for (auto candidates = names; !candidates.empty();) {
      auto agent = layout_.emptiest(candidates);
      auto placed = place(live.at(agent), {p}, false);
      if (placed.ok()) {
        r.agent = agent;
        break;
      }
      r.error += (r.error.empty() ? "" : "; ") + placed.message();
      candidates.erase(std::find(candidates.begin(), candidates.end(), agent));
    }
    out.push_back(std::move(r));
  }
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
              if (p.partition >= 0) layout_.placed(agent.name, p.partition);
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
