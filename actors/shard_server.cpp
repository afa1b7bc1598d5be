#include <fstream>
#include <set>

#include <fmt/format.h>

#include "actors/actors.hpp"

namespace cerebro {

shard_server_actor spawn_shard_server(caf::actor_system& system, std::string experiment, std::string data_dir,
                                      std::vector<std::string> files) {
  std::set<std::string> allowed(files.begin(), files.end());
  return system.spawn<caf::detached>([experiment, data_dir, allowed]() -> shard_server_actor::behavior_type {
    return {
        [=](fetch_atom, const std::string& exp, const std::string& file, int64_t offset,
            int64_t length) -> caf::result<std::string> {
          if (exp != experiment || !allowed.count(file))
            return caf::make_error(caf::sec::runtime_error, fmt::format("no shard {} in {}", file, exp));
          if (offset < 0 || length <= 0)
            return caf::make_error(caf::sec::runtime_error, "bad chunk range");
          length = std::min(length, max_chunk_bytes);
          std::ifstream in(data_dir + "/" + file, std::ios::binary);
          in.seekg(offset);
          std::string chunk(static_cast<size_t>(length), '\0');
          in.read(chunk.data(), length);
          chunk.resize(static_cast<size_t>(in.gcount()));
          if (chunk.empty()) return caf::make_error(caf::sec::runtime_error, fmt::format("{}: nothing at offset {}", file, offset));
          return chunk;
        },
    };
  });
}

}  // namespace cerebro
