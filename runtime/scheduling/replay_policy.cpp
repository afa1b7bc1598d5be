#include "runtime/scheduling/replay_policy.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "runtime/base/status.hpp"

namespace cerebro {

Status ReplayPolicy::check(const VisitOrder& visit_order) {
  for (const auto& [config, epochs] : visit_order) {
    for (size_t e = 0; e < epochs.size(); ++e) {
      std::set<PartitionId> seen;
      for (PartitionId p : epochs[e]) {
        if (p < 0 || !seen.insert(p).second) {
          return Status::invalid_argument(
              fmt::format("ReplayPolicy: visit order of config {} epoch {} has {} partition {}", config, e,
                          p < 0 ? "negative" : "repeated", p));
        }
      }
    }
  }
  return Status::ok_status();
}

Result<std::unique_ptr<ReplayPolicy>> ReplayPolicy::create(VisitOrder visit_order) {
  if (auto checked = check(visit_order); !checked.ok()) return checked;
  return std::make_unique<ReplayPolicy>(std::move(visit_order));
}

ReplayPolicy::ReplayPolicy(VisitOrder visit_order) : visit_order_(std::move(visit_order)) {
  if (auto checked = check(visit_order_); !checked.ok()) contract_violation("ReplayPolicy", checked.message());
}

std::optional<PartitionId> ReplayPolicy::next_logged(ConfigId c, int32_t e, const MopBook& book) const {
  auto it = visit_order_.find(c);
  if (it == visit_order_.end() || e < 0 || static_cast<size_t>(e) >= it->second.size()) {
    return std::nullopt;
  }
  std::vector<PartitionId> pending = book.pending_partitions(c);
  for (PartitionId p : it->second[e]) {
    if (std::binary_search(pending.begin(), pending.end(), p)) return p;
  }
  return std::nullopt;  // every logged partition is done: the rest is unlogged
}

std::optional<Unit> ReplayPolicy::choose(WorkerId w, const MopBook& book) {
  std::vector<Unit> eligible = book.eligible_units(w);
  // eligible is sorted by (config, partition): one log look-up per config.
  std::optional<ConfigId> looked_up;
  std::optional<PartitionId> next;
  for (const Unit& u : eligible) {
    if (u.config != looked_up) {
      looked_up = u.config;
      next = next_logged(u.config, u.epoch, book);
    }
    if (!next || *next == u.partition) return u;
  }
  return std::nullopt;
}

}  // namespace cerebro
