#pragma once
// Replays a finished run's recorded decisions (ExperimentControl::
// take_decisions(), as persisted by the shell). Together with ReplayPolicy,
// which repeats each config's partition order, and unit seeds that depend only
// on the unit, a replayed ASHA, Hyperband or PBT run stops the same configs at
// the same epochs and makes the same state copies, so every config's metrics
// come out the same.
//
// Each config's epoch e gets the decision recorded for (config, e) at once,
// with one exception: an exploit whose source has not yet reached the end of
// its epoch source_epoch in the replay waits for it (the state to copy does not
// exist yet); the original run's order guarantees that it comes. If the source
// leaves the replay before (the replay diverged from the original), the
// waiting config is stopped with a reason saying so. An epoch with no
// recorded decision (the original ended before it) continues.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/base/status.hpp"
#include "runtime/search/search_procedure.hpp"

namespace cerebro {

class ReplayDecisions : public SearchProcedure {
 public:
  // invalid_argument if two decisions name the same (config, epoch): the
  // records contradict themselves.
  static Result<std::unique_ptr<ReplayDecisions>> create(const std::vector<SearchDecision>& recorded);
  // For records that create() accepts: others are a contract violation.
  explicit ReplayDecisions(const std::vector<SearchDecision>& recorded);

  std::string name() const override { return "replay"; }
  bool takes_added_configs() const override { return false; }
  std::vector<SearchDecision> decide(const EpochOutcome& outcome) override;
  std::vector<SearchDecision> on_config_ended(ConfigId config) override;

 private:
  using EpochKey = std::pair<ConfigId, int32_t>;  // (config, epoch)
  std::map<EpochKey, SearchDecision> recorded_;
  std::map<ConfigId, int32_t> epochs_ended_;                 // per config: the epochs ended in this replay
  std::map<EpochKey, std::vector<SearchDecision>> waiting_;  // exploits by the (source, source_epoch) they need
};

}  // namespace cerebro
