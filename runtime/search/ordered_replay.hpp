#pragma once
// Replays a run whose search procedure proposes its configs as it goes (tpe):
// the procedure itself runs again (same seed, options and warm start), so it
// re-derives every proposal and decision, and this wrapper makes it hear the
// epoch ends in the original run's order. A proposal is a function of the
// ended configs' results and of the order they ended in; the replay's
// workers finish epochs in another order (other timings), so without the
// wrapper the model would be conditioned on another history.
//
// The rule: the original's epoch ends (its unit log, commit order) are a
// queue. An epoch end of the replay that is not at the head waits (its config
// stays awaiting its decision and holds no worker) until the ones before it
// have been handed on. This cannot stall: the head's config was proposed and
// decided on by events before it, so it trains and its epoch ends. Each
// outcome handed on carries the original's train_seconds (the objective
// train_seconds is a measured time, not reproducible).
//
// Configs that end without an epoch end in the unit log (a failed pilot
// check, a unit that failed all its attempts) are handed on when they end in
// the replay. Should the replay leave the original's path (an epoch end the
// original did not have, or a config that ended in the replay while the
// original still has epoch ends of it), the wrapper stops ordering and hands
// everything on as it comes, so the run finishes and the replay's comparison
// of the metrics reports the difference.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/search/search_procedure.hpp"

namespace cerebro {

// An event of the original run that its search procedure heard.
struct RecordedEpochEnd {
  ConfigId config = 0;
  int32_t epoch = 0;         // the config's epoch that ended (0-based)
  bool diverged = false;     // the config diverged in this epoch: it ended without a decision
  double train_seconds = 0;  // the config's training time at that point of the original
};

class OrderedReplay : public SearchProcedure {
 public:
  OrderedReplay(std::unique_ptr<SearchProcedure> procedure, std::vector<RecordedEpochEnd> original_order);

  std::string name() const override { return procedure_->name(); }
  bool takes_added_configs() const override { return false; }
  std::vector<SearchDecision> decide(const EpochOutcome& outcome) override;
  std::vector<SearchDecision> on_config_ended(ConfigId config) override;
  std::vector<ConfigProposal> take_proposals() override;
  void use_recorded_params(ConfigId config, const nlohmann::json& params) override {
    procedure_->use_recorded_params(config, params);
  }

  // The replay left the original's path (see above); false while it follows it.
  bool diverged() const { return diverged_; }
  // Epoch ends waiting for earlier ones of the original.
  size_t waiting() const { return held_.size() + held_ends_.size(); }

 private:
  using EpochKey = std::pair<ConfigId, int32_t>;
  // Hands on every held event that is next in the original order.
  std::vector<SearchDecision> release();
  std::vector<SearchDecision> forward_decide(EpochOutcome outcome);
  std::vector<SearchDecision> forward_end(ConfigId config);
  // Gives up the ordering: everything held is handed on, in arrival order.
  std::vector<SearchDecision> leave_path();
  bool expected_later(ConfigId config) const;

  std::unique_ptr<SearchProcedure> procedure_;
  std::deque<RecordedEpochEnd> order_;           // the original's events not yet handed on
  std::set<EpochKey> remaining_;                 // their (config, epoch), for lookups
  std::map<EpochKey, double> recorded_seconds_;  // train_seconds of the original's epoch ends
  std::map<EpochKey, EpochOutcome> held_;        // epoch ends waiting for their turn
  std::vector<EpochKey> arrival_;                // held epoch ends, in arrival order
  std::set<ConfigId> held_ends_;                 // divergences waiting for their turn
  std::map<ConfigId, int32_t> planned_epochs_;   // from the proposals
  std::set<ConfigId> ended_;                     // configs that ended in the replay
  bool diverged_ = false;
};

}  // namespace cerebro
