#pragma once
// SearchProcedure: the AutoML hook called at each config's epoch boundary.
// Under MOP every config finishes its epochs on its own schedule, so decisions
// are made per config as its epoch ends (MopBook: awaiting_decision ->
// advance or stop). ExperimentControl reports each epoch's losses through
// decide() and applies the SearchDecisions it returns:
//
//   continue_training -> MopBook::advance (finishes the config after its last planned epoch)
//   stop              -> MopBook::stop (its remaining units are freed at once)
//   exploit           -> the config first takes another config's state and new
//                        hyper-parameters (a StateCopy the shell executes), then advances
//
// A procedure may also answer later: it returns no decision for a config that
// must wait (Hyperband's synchronous rungs, a replayed copy whose source is not
// there yet) and decides for it when another config's epoch ends or a config
// leaves the search (on_config_ended). The waiting config stays
// awaiting_decision meanwhile: it holds no worker and is not dispatched.
//
// Procedures are plain, deterministic objects (same calls, same decisions); the
// one per file under runtime/search/ are built by make_search_procedure
// (runtime/search/factory.hpp). Not thread-safe: owned by one ExperimentControl.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/spec/metric.hpp"
#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

struct EpochOutcome {
  ConfigId config = 0;
  int32_t epoch = 0;  // the config's epoch that ended, 0-based: the config has trained epoch + 1 epochs
  double train_loss = 0;
  double val_loss = 0;
  double val_accuracy = 0;
  MetricValues val_metrics;  // the task's or template's named metrics ("r2" ...), runtime/spec/metric.hpp
  double train_seconds = 0;  // the config's training time so far: its committed units' train_s
};

// The ranking metric of procedures that compare configs.
// The search procedures score by the experiment's metric (runtime/spec/metric.hpp).
using SearchMetric = Metric;

// The outcome's metric as a score where higher is better: the value, or minus
// it for a metric where lower is better (the loss, mse ...). NaN (no usable
// validation, or a metric the validation did not compute) scores as
// -infinity, the worst.
double metric_score(const EpochOutcome& outcome, SearchMetric metric);

// The simple, immediate form of a decision (grid, random, tests).
enum class EpochDecision { continue_training, stop };

// What happens to one config at one of its epoch boundaries. The same record
// is what ExperimentControl hands to the shell to persist next to the unit
// log, so `show`, replay and resume see every decision.
struct SearchDecision {
  enum class Kind { continue_training, stop, exploit };

  ConfigId config = 0;
  int32_t epoch = 0;  // the config's epoch that ended (0-based)
  Kind kind = Kind::continue_training;
  std::string reason;  // one human line saying why; empty for a plain "train on"
  // exploit only: before its next epoch the config takes the state (weights,
  // buffers and optimizer state) that `source` had at the end of its epoch
  // `source_epoch`, and trains on with hyper-parameters `params`.
  ConfigId source = -1;
  int32_t source_epoch = -1;
  nlohmann::json params;  // exploit: the config's new hyper-parameters; null otherwise

  static SearchDecision continue_training(ConfigId config, int32_t epoch, std::string reason = {});
  static SearchDecision stop(ConfigId config, int32_t epoch, std::string reason);
  static SearchDecision exploit(ConfigId config, int32_t epoch, ConfigId source, int32_t source_epoch,
                                nlohmann::json params, std::string reason);
};

bool operator==(const SearchDecision& a, const SearchDecision& b);
inline bool operator!=(const SearchDecision& a, const SearchDecision& b) { return !(a == b); }

// "continue", "stop", "exploit"
std::string to_string(SearchDecision::Kind kind);
std::optional<SearchDecision::Kind> parse_search_decision_kind(const std::string& text);
// "config 3 epoch 2: stop (val_accuracy 0.61 is not in the top 1/3 at rung 3)"
std::string to_string(const SearchDecision& decision);

// {"config", "epoch", "decision", "reason", and for exploit "source",
// "source_epoch", "params"}; the parser's invalid_argument names the bad field.
nlohmann::json to_json(const SearchDecision& decision);
Result<SearchDecision> search_decision_from_json(const nlohmann::json& j);

// A config a procedure proposes while the search runs (tpe): the shell makes
// its initial state durable, then ExperimentControl adds it to the schedule.
struct ConfigProposal {
  ConfigId config = 0;
  nlohmann::json params;  // object: key -> concrete value
  int32_t epochs = 1;     // planned epochs
  std::string reason;     // one human line: how it was proposed
};

class SearchProcedure {
 public:
  virtual ~SearchProcedure() = default;
  virtual std::string name() const { return "fixed"; }
  // Configs added while it runs (steering add and clone) fit it: procedures
  // that plan their configs up front (asha, hyperband, pbt, replay) say no.
  virtual bool takes_added_configs() const { return true; }

  // The simple form: decide at once for the config whose epoch ended.
  // Procedures that need no more override only this. Default: continue.
  virtual EpochDecision on_epoch_end(const EpochOutcome& outcome);

  // The general form ExperimentControl calls: decisions for any configs
  // awaiting one (the outcome's config or others), possibly none. Each config
  // gets exactly one decision per epoch boundary. Default: on_epoch_end's
  // decision for the outcome's config.
  virtual std::vector<SearchDecision> decide(const EpochOutcome& outcome);

  // Config `config` left the search without a decision of this procedure
  // (diverged, failed, rejected by its pilot check): procedures waiting for it
  // stop waiting and return what that unblocks. Default: nothing.
  virtual std::vector<SearchDecision> on_config_ended(ConfigId config);

  // Procedures that propose their configs as the search goes (tpe): the
  // configs proposed since the last call, in order. Default: none (the
  // configs are planned up front).
  virtual std::vector<ConfigProposal> take_proposals() { return {}; }
  // Resuming: the run recorded config `config` with `params`, which the
  // procedure re-derived differently (the record wins: it is what trained).
  virtual void use_recorded_params(ConfigId /*config*/, const nlohmann::json& /*params*/) {}
};

// Grid and random search train every config for its planned epochs: always
// continue (MopBook finishes the config after its last planned epoch).
class FixedEpochsProcedure : public SearchProcedure {
 public:
  EpochDecision on_epoch_end(const EpochOutcome& outcome) override;
};

}  // namespace cerebro
