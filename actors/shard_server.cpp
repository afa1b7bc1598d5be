#include <fstream>
#include <set>

#include <fmt/format.h>

#include "actors/actors.hpp"
#include "runtime/net/error_category.hpp"

namespace cerebro {

shard_server_actor spawn_shard_server(caf::actor_system& system, std::string experiment, std::string data_dir,
                                      std::vector<std::string> files) {
  std::set<std::string> allowed(files.begin(), files.end());
  return system.spawn<caf::detached>([experiment, data_dir, allowed]() -> shard_server_actor::behavior_type {
    return {
        [=](fetch_atom, const std::string& exp, const std::string& file, int64_t offset,
            int64_t length) -> caf::result<std::string> {
          if (exp != experiment || !allowed.count(file))
            return make_error(StatusCode::not_found, fmt::format("no shard {} in {}", file, exp));
          if (offset < 0 || length <= 0) return make_error(StatusCode::invalid_argument, "bad chunk range");
          length = std::min(length, max_chunk_bytes);
          std::ifstream in(data_dir + "/" + file, std::ios::binary);
          if (!in) return make_error(StatusCode::not_found, fmt::format("{}: cannot open it in {}", file, data_dir));
          in.seekg(offset);
          std::string chunk(static_cast<size_t>(length), '\0');
          in.read(chunk.data(), length);
          chunk.resize(static_cast<size_t>(in.gcount()));
          // The file is shorter than its placement says: this copy is not the shard it names.
          if (chunk.empty())
            return make_error(StatusCode::corruption, fmt::format("{}: nothing at offset {}", file, offset));
          return chunk;
        },
    };
  });
}

}  // namespace cerebro
