#include "actors/shard_placer.hpp"

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "runtime/net/error_category.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

using Placements = std::shared_ptr<const std::vector<shard_placement>>;

// Sends placement `next` of `todo`, then the one after it once it is held.
void place_next(run_follower_actor::pointer self, agent_actor agent, std::string name, Placements todo, size_t next,
                std::function<void(Status)> done) {
  if (next == todo->size()) return done(Status());
  self->request(agent, caf::infinite, place_atom::value, (*todo)[next])
      .then([self, agent, name, todo, next, done](bool) { place_next(self, agent, name, todo, next + 1, done); },
            [self, name, todo, next, done](const caf::error& e) {
              auto code = to_status(e).code();
              if (code == StatusCode::unknown) code = StatusCode::unavailable;
              done(Status::of(code,
                              fmt::format("placing {} on {}: {}", (*todo)[next].file, name, self->system().render(e))));
            });
}

}  // namespace

ShardPlacer::ShardPlacer(std::string experiment, datasets::Manifest manifest, std::string data_dir,
                         shard_server_actor source)
    : experiment_(std::move(experiment)),
      manifest_(std::move(manifest)),
      data_dir_(std::move(data_dir)),
      source_(std::move(source)) {}

std::vector<std::string> ShardPlacer::files_of(const datasets::Manifest& manifest) {
  std::vector<std::string> files;
  for (const auto& p : manifest.partitions) files.push_back(p.file);
  files.push_back(manifest.validation.file);
  return files;
}

shard_placement ShardPlacer::placement(PartitionId id, const datasets::ShardInfo& shard) const {
  return shard_placement{
      experiment_, id, shard.file, shard.bytes, shard.checksum, (fs::path(data_dir_) / shard.file).string(), source_};
}

void ShardPlacer::place(run_follower_actor::pointer self, const ClusterView::Agent& agent,
                        const std::vector<PartitionId>& partitions, bool with_validation,
                        std::function<void(Status)> done) const {
  auto todo = std::make_shared<std::vector<shard_placement>>();
  for (auto p : partitions) todo->push_back(placement(p, manifest_.partitions.at(static_cast<size_t>(p))));
  if (with_validation) todo->push_back(placement(validation_partition, manifest_.validation));
  place_next(self, agent.agent, agent.name, std::move(todo), 0, std::move(done));
}

}  // namespace cerebro
