#pragma once
// search = "tpe": TpeSampler (tpe.hpp) as a search procedure that proposes its
// configs as the search goes, asynchronously under MOP (docs/SEARCH.md).
//
//  - At most `in_flight` configs are live (proposed and not ended) at a time,
//    `samples` in all. A new config is proposed as soon as one ends: its last
//    epoch is decided, the pruner stops it, it fails or diverges, or a person
//    stops it. ExperimentControl collects the proposals (take_proposals) and
//    its shell makes each config's initial state durable before it trains.
//  - Each proposal is conditioned on every config that ended so far, in the
//    order they ended (the sampler's observations), with the live ones as
//    the constant liar (the sampler's pending configs), and on the warm-start
//    observations of earlier runs, which come first.
//  - Without a pruner a config trains `epochs` epochs; its observation is the
//    score of the last epoch it finished (-inf if none: failed or diverged
//    before any).
//  - With pruner = "asha" every config is decided by ASHA's rungs; with
//    pruner = "hyperband" by one of several ASHA brackets (asynchronous
//    Hyperband: bracket b's first rung is min_epochs * eta^b, a config's bracket
//    is its id modulo the brackets). The model is fitted at the highest level
//    (a rung, or max_epochs) where at least `startup` configs have a score:
//    there a config's observation is its score at that level; a config that
//    ended below it (pruned, failed, diverged) counts as a failed one (-inf);
//    a live one below it is pending. While no level has `startup` scores, the
//    lowest rung is used (and the sampler is still in its random startup).
//
// Deterministic: proposals are a function of the seed, the options and the
// order of the calls (decide, on_config_ended), so resuming (replaying the
// unit log) re-derives every proposal. Config ids are 0, 1, ... in proposal order.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/search/asha.hpp"
#include "runtime/search/search_procedure.hpp"
#include "runtime/search/tpe.hpp"
#include "runtime/spec/objective.hpp"
#include "runtime/spec/spec_choices.hpp"

namespace cerebro {

using TpePruner = Pruner;  // the spec's [experiment] pruner

struct TpeSearchOptions {
  int samples = 1;         // configs to propose in all
  int in_flight = 1;       // configs live at once
  int32_t epochs = 1;      // planned epochs of each config (max_epochs with a pruner)
  int32_t min_epochs = 1;  // pruner: the first rung
  int32_t eta = 3;         // pruner: the reduction factor
  int32_t brackets = 0;    // hyperband pruner: brackets, 0 = all
  TpePruner pruner = TpePruner::none;
  SearchMetric metric = SearchMetric::val_accuracy;
  TpeOptions tpe;
  // Finished configs of earlier runs (warm start), scores higher-is-better.
  std::vector<TpeObservation> warm;
  // Several objectives (MOTPE): the spec's list; empty for `metric` alone.
  // Modelled: task metrics, parameters (parameters_of, the run's model
  // builder) and train_seconds; inference_ms is measured at the run's end only
  // and not modelled. The pruner ranks by `metric`.
  std::vector<Objective> objectives;
  std::function<Result<double>(const nlohmann::json& params)> parameters_of;
};

class TpeProcedure : public SearchProcedure {
 public:
  // Errors: the sampler's (space, options); options out of range.
  static Result<std::unique_ptr<TpeProcedure>> create(const nlohmann::json& space, uint64_t seed,
                                                      TpeSearchOptions options);

  std::string name() const override { return "tpe"; }
  bool takes_added_configs() const override { return false; }
  std::vector<SearchDecision> decide(const EpochOutcome& outcome) override;
  std::vector<SearchDecision> on_config_ended(ConfigId config) override;
  std::vector<ConfigProposal> take_proposals() override;
  void use_recorded_params(ConfigId config, const nlohmann::json& params) override;

  int proposed() const { return static_cast<int>(configs_.size()); }
  int live() const;
  // The level (epochs) the model was last fitted at, 0 before any proposal by the model.
  int32_t model_level() const { return model_level_; }

 private:
  struct Tracked {
    nlohmann::json params;
    std::map<int32_t, std::vector<double>> scores;  // trained epochs -> scores (one per modelled objective)
    bool ended = false;
    double parameters = 0;  // when an objective is `parameters`
  };
  // The modelled objectives' scores, higher is better.
  std::vector<double> scores_of(const EpochOutcome& outcome, const Tracked& config) const;
  size_t modelled_objectives() const;

  TpeProcedure(TpeSampler sampler, TpeSearchOptions options);
  // Proposes configs while fewer than in_flight are live and fewer than
  // samples were proposed; the sampler's error when it cannot.
  Status propose_while_slots_free();
  // The same while the search runs, where a failure is a contract violation.
  void keep_proposing();
  void end(ConfigId config);
  // The levels the model may be fitted at, lowest first.
  std::vector<int32_t> levels() const;

  TpeSampler sampler_;
  TpeSearchOptions options_;
  std::vector<Tracked> configs_;                          // by id
  std::vector<ConfigId> ended_order_;                     // in the order they ended
  std::vector<ConfigProposal> proposals_;                 // not yet taken
  std::vector<std::unique_ptr<AshaProcedure>> brackets_;  // pruner: one per bracket
  int32_t model_level_ = 0;
};

}  // namespace cerebro
