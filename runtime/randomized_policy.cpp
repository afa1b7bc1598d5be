#include "runtime/randomized_policy.hpp"

#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "runtime/critical_path_policy.hpp"
#include "runtime/status.hpp"

namespace cerebro {

// Uniform among the eligible units, without listing them: draw among the
// (config, partition) pairs of the book's per-partition index for w's
// partitions and redraw when the config is busy. Each accepted draw is uniform
// over the eligible units; after a few rejections (most needers busy) it lists
// them instead, which is uniform too. So this picks exactly like choosing
// uniformly from eligible_units(w), in O(partitions w holds) per draw.
std::optional<Unit> RandomizedPolicy::choose(WorkerId w, const MopBook& book) {
  if (book.worker_busy(w)) return std::nullopt;
  const std::set<PartitionId>& holds = book.holdings(w);
  size_t pairs = 0;
  for (PartitionId p : holds) pairs += book.configs_needing(p).size();
  if (pairs == 0) return std::nullopt;
  std::uniform_int_distribution<size_t> any_pair(0, pairs - 1);
  for (int attempt = 0; attempt < 8; ++attempt) {
    size_t index = any_pair(rng_);
    for (PartitionId p : holds) {
      const std::vector<ConfigId>& needing = book.configs_needing(p);
      if (index >= needing.size()) {
        index -= needing.size();
        continue;
      }
      ConfigId c = needing[index];
      if (!book.config_busy(c)) return Unit{c, p, book.epoch(c)};
      break;
    }
  }
  std::vector<Unit> eligible;
  for (PartitionId p : holds) {
    for (ConfigId c : book.configs_needing(p)) {
      if (!book.config_busy(c)) eligible.push_back(Unit{c, p, book.epoch(c)});
    }
  }
  if (eligible.empty()) return std::nullopt;
  std::uniform_int_distribution<size_t> pick(0, eligible.size() - 1);
  return eligible[pick(rng_)];
}

// The factory of the policies constructible from a name alone.
std::unique_ptr<SchedulingPolicy> make_policy(const std::string& name, uint64_t seed) {
  if (name == "randomized") return std::make_unique<RandomizedPolicy>(seed);
  if (name == "critical_path") return std::make_unique<CriticalPathPolicy>(seed);
  throw Error(fmt::format("unknown scheduling policy '{}' (known: {})", name, fmt::join(policy_names(), ", ")));
}

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = {"randomized", "critical_path"};
  return names;
}

}  // namespace cerebro
