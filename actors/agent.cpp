// The node agent: the node's workers borrow partitions through it, and it
// makes the node hold the shards the coordinator places on it.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "datasets/shard.hpp"
#include "runtime/base/log_lines.hpp"
#include "runtime/net/cluster_validation.hpp"
#include "runtime/net/error_category.hpp"

namespace fs = std::filesystem;

namespace cerebro {

namespace {

using shard_key = std::pair<std::string, PartitionId>;

struct agent_state {
  agent_config config;
  std::vector<worker_actor> workers;
  std::map<shard_key, data_partition_actor> partitions;
  std::map<shard_key, std::string> checksums;
  std::map<shard_key, int64_t> bytes_in_memory;  // shards read into memory (the rest are mapped)
  static inline const char* name = "cerebro.agent";
};

using agent_ptr = agent_actor::stateful_pointer<agent_state>;

int64_t memory_in_use(const agent_state& st) {
  int64_t total = 0;
  for (const auto& [key, bytes] : st.bytes_in_memory) total += bytes;
  return total;
}

// Loads a verified shard file and hands it to a new data-partition actor:
// into memory while the node's budget allows, otherwise memory-mapped.
Status hold(agent_ptr self, const shard_placement& p, const std::string& path) {
  shard_key key{p.experiment, p.partition};
  if (auto it = self->state.partitions.find(key); it != self->state.partitions.end()) {
    self->send_exit(it->second, caf::exit_reason::user_shutdown);
    self->state.partitions.erase(it);
    self->state.bytes_in_memory.erase(key);
  }
  const int64_t budget = self->state.config.memory_budget_bytes;
  const bool in_memory = budget <= 0 || memory_in_use(self->state) + p.bytes <= budget;
  auto data = in_memory ? datasets::read_shard(path, p.checksum) : datasets::map_shard(path, p.checksum);
  if (!data.ok()) return data.status();
  if (in_memory) self->state.bytes_in_memory[key] = p.bytes;
  self->state.partitions[key] = spawn_data_partition(
      self->system(), p.partition, std::make_shared<const datasets::Dataset>(std::move(data).value()));
  self->state.checksums[key] = p.checksum;
  return Status::ok_status();
}

bool has_checksum(const std::string& path, const std::string& checksum) {
  std::error_code ec;
  if (path.empty() || !fs::is_regular_file(path, ec)) return false;
  auto sum = datasets::file_checksum(path);
  return sum.ok() && *sum == checksum;
}

// Fetches the shard in chunks of at most max_chunk_bytes, appending each to a
// temporary file, so memory stays bounded by the chunk size; then verifies.
void fetch(agent_ptr self, shard_placement p, caf::typed_response_promise<bool> promise, std::string cache_path,
           int64_t offset) {
  auto tmp = cache_path + "." + p.experiment + ".part";
  self->request(p.source, caf::infinite, fetch_atom::value, p.experiment, p.file, offset, max_chunk_bytes)
      .then(
          [=](const std::string& chunk) mutable {
            if (chunk.empty() || static_cast<int64_t>(chunk.size()) > max_chunk_bytes ||
                offset + static_cast<int64_t>(chunk.size()) > p.bytes) {
              // Not the bytes the placement describes: the same as failing the checksum.
              promise.deliver(make_error(StatusCode::corruption,
                                         fmt::format("{}: the source sent a bad chunk at offset {}", p.file, offset)));
              return;
            }
            {
              std::ofstream out(tmp, std::ios::binary | (offset == 0 ? std::ios::trunc : std::ios::app));
              out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
              if (!out) {
                promise.deliver(make_error(StatusCode::io_error, fmt::format("{}: cannot write", tmp)));
                return;
              }
            }
            offset += static_cast<int64_t>(chunk.size());
            if (offset < p.bytes) {
              fetch(self, p, promise, cache_path, offset);
              return;
            }
            if (!has_checksum(tmp, p.checksum)) {
              std::error_code ec;
              fs::remove(tmp, ec);
              promise.deliver(
                  make_error(StatusCode::corruption,
                             fmt::format("{}: received shard does not match checksum {}", p.file, p.checksum)));
              return;
            }
            std::error_code ec;
            fs::rename(tmp, cache_path, ec);
            auto held = hold(self, p, cache_path);
            if (!held.ok())
              promise.deliver(to_error(held));  // its code: corruption, io_error ...
            else
              promise.deliver(true);
          },
          [=](const caf::error& e) mutable {
            // The source's code travels on (CAF's own errors, e.g. a lost peer, stay unknown).
            promise.deliver(to_error(to_status(e).with_context(p.file + ": fetch failed")));
          });
}

agent_actor::behavior_type agent_behavior(agent_ptr self, agent_config config) {
  self->state.config = std::move(config);
  return {
      [self](borrow_atom, const std::string& experiment, PartitionId id) -> caf::result<partition_lease> {
        auto it = self->state.partitions.find({experiment, id});
        if (it == self->state.partitions.end())
          return make_error(StatusCode::not_found, fmt::format("node {} holds no partition {} of {}",
                                                               self->state.config.name, id, experiment));
        return self->delegate(it->second, borrow_atom::value);
      },
      [self](place_atom, shard_placement p) -> caf::result<bool> {
        if (auto v = validate_placement(p); !v.ok()) return to_error(v);
        shard_key key{p.experiment, p.partition};
        if (self->state.checksums.count(key) && self->state.checksums[key] == p.checksum) return true;
        // Cached by content: the same shard of another experiment (or an
        // earlier run of this one) is found again.
        auto dir = fs::path(self->state.config.data_dir) / "shards";
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec)
          return make_error(StatusCode::io_error, fmt::format("{}: cannot create: {}", dir.string(), ec.message()));
        auto cache_path = (dir / (p.checksum.substr(6) + "-" + p.file)).string();
        auto say = [self, &p](const std::string& what) {
          emit_log_line(fmt::format("agent {}: {} {}: {}", self->state.config.name, p.experiment, p.file, what));
        };
        if (fs::exists(cache_path, ec)) {
          if (hold(self, p, cache_path).ok()) {  // hold verifies the checksum
            say("cached copy matches its checksum, no transfer");
            return true;
          }
          say("cached copy does not match its checksum, fetching it again");
          fs::remove(cache_path, ec);
        }
        if (self->state.config.shared_filesystem && !p.local_path.empty()) {
          auto held = hold(self, p, p.local_path);  // verifies the checksum
          if (held.ok()) return true;
        }
        say(fmt::format("fetching {:.1f} MB in chunks of at most {:.1f} MB", p.bytes / 1e6, max_chunk_bytes / 1e6));
        if (!p.source) return make_error(StatusCode::not_found, p.file + ": no source to fetch it from");
        auto promise = self->make_response_promise<bool>();
        fetch(self, p, promise, cache_path, 0);
        return promise;
      },
      [self](release_atom, const std::string& experiment) {
        for (auto it = self->state.partitions.begin(); it != self->state.partitions.end();) {
          if (it->first.first == experiment) {
            self->send_exit(it->second, caf::exit_reason::user_shutdown);
            self->state.checksums.erase(it->first);
            self->state.bytes_in_memory.erase(it->first);
            it = self->state.partitions.erase(it);
          } else {
            ++it;
          }
        }
        for (auto& w : self->state.workers) self->send(w, release_atom::value, experiment);
      },
      [self](std::vector<worker_actor>& workers) { self->state.workers = std::move(workers); },
      // The node's supervisor replaces a worker that died (same index).
      [self](respawn_atom, caf::actor_id old) -> caf::result<worker_actor> {
        auto& workers = self->state.workers;
        auto it = std::find_if(workers.begin(), workers.end(), [old](const worker_actor& w) { return w.id() == old; });
        if (it == workers.end())
          return make_error(StatusCode::not_found, fmt::format("node {} has no such worker", self->state.config.name));
        auto index = static_cast<WorkerId>(it - workers.begin());
        *it = spawn_worker(self->system(),
                           worker_config{index, caf::actor_cast<agent_actor>(self), self->state.config.gang_address});
        emit_log_line(fmt::format("agent {}: worker {} died; respawned it", self->state.config.name, index));
        return *it;
      },
  };
}

}  // namespace

agent_handles spawn_agent(caf::actor_system& system, agent_config config) {
  agent_handles h;
  int n = config.workers;
  const std::string gang_address = config.gang_address;
  h.agent = system.spawn<caf::detached>(agent_behavior, std::move(config));
  for (int i = 0; i < n; ++i) h.workers.push_back(spawn_worker(system, worker_config{i, h.agent, gang_address}));
  caf::anon_send(h.agent, h.workers);
  return h;
}

}  // namespace cerebro
