#include "runtime/scheduling/randomized_policy.hpp"

#include <set>
#include <vector>

#include <fmt/format.h>

#include "runtime/base/status.hpp"

namespace cerebro {

// Uniform among the eligible units, without listing them. A few times: draw
// a (config, partition) pair of the book's per-partition index for w's
// partitions (a partition with probability proportional to its configs, then
// configs added until one needs it: O(1) while many do) and take it if the
// config is idle. Each accepted draw is uniform over the eligible units. When
// that fails or would be slow (few configs need the partition, or most of those
// are busy), count the idle configs needing each partition, 64 at a time, and
// take the k-th, which is uniform too.
std::optional<Unit> RandomizedPolicy::choose(WorkerId w, const MopBook& book) {
  if (book.worker_busy(w)) return std::nullopt;
  const std::vector<PartitionId>& holds = book.holdings(w);
  int64_t pairs = 0;
  for (PartitionId p : holds) pairs += book.count_needing(p);
  if (pairs == 0) return std::nullopt;
  const auto configs = static_cast<int64_t>(book.config_count());
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto index = static_cast<int64_t>(rng_.below(static_cast<uint64_t>(pairs)));
    PartitionId p = -1;
    for (PartitionId held : holds) {
      index -= book.count_needing(held);
      if (index < 0) {
        p = held;
        break;
      }
    }
    if (int64_t{book.count_needing(p)} * 8 < configs) break;  // few: count instead
    std::optional<ConfigId> c;
    while (!c) c = book.config_needing_at(p, static_cast<int32_t>(rng_.below(static_cast<uint64_t>(configs))));
    if (!book.config_busy(*c)) return Unit{*c, p, book.epoch(*c)};
  }
  idle_counts_.clear();
  int64_t idle_pairs = 0;
  for (PartitionId p : holds) {
    idle_counts_.push_back(book.count_idle_needing(p));
    idle_pairs += idle_counts_.back();
  }
  if (idle_pairs == 0) return std::nullopt;
  auto index = static_cast<int64_t>(rng_.below(static_cast<uint64_t>(idle_pairs)));
  size_t i = 0;
  for (PartitionId p : holds) {
    int32_t idle = idle_counts_[i++];
    if (index < idle) {
      ConfigId c = book.idle_config_needing(p, static_cast<int32_t>(index));
      return Unit{c, p, book.epoch(c)};
    }
    index -= idle;
  }
  return std::nullopt;  // not reached: index < idle_pairs
}

}  // namespace cerebro
