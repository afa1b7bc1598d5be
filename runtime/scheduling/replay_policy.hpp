#pragma once
// ReplayPolicy: re-executes a run with the same per-config visit order. It is
// built from the order in which each config visited the partitions in each
// epoch (e.g. read back from a unit log) and only ever picks, for a config, the
// next partition of its logged order that is still pending. Where the log has
// nothing left to say for a config's current epoch (epoch not logged, or every
// logged partition done) its remaining units run lowest partition first, so a
// partial log (e.g. of an interrupted run) never stalls the replay.
//
// Only the order within each config is reproduced: how configs interleave on
// the workers depends on unit durations and is not. Among several configs whose
// next logged unit worker w can run, the lowest config id wins.

#include <map>
#include <vector>

#include "runtime/scheduling/scheduling_policy.hpp"

namespace cerebro {

class ReplayPolicy : public SchedulingPolicy {
 public:
  // visit_order[c][e] is the order in which config c visited partitions in its
  // epoch e (absolute epoch index).
  using VisitOrder = std::map<ConfigId, std::vector<std::vector<PartitionId>>>;
  // invalid_argument naming a negative or repeated partition within one
  // epoch (an order read from a unit log that contradicts MOP).
  static Status check(const VisitOrder& visit_order);
  // The policy of an order that passes check().
  static Result<std::unique_ptr<ReplayPolicy>> create(VisitOrder visit_order);
  // For an order known to pass check(): one that does not is a contract violation.
  explicit ReplayPolicy(VisitOrder visit_order);

  std::string name() const override { return "replay"; }
  std::optional<Unit> choose(WorkerId w, const MopBook& book) override;

 private:
  // The logged partition c must visit next in epoch e, if the log covers it.
  std::optional<PartitionId> next_logged(ConfigId c, int32_t e, const MopBook& book) const;

  VisitOrder visit_order_;
};

}  // namespace cerebro
