#pragma once
// What a call of ExperimentControl made happen, as values: an epoch's scores,
// a divergence, a failed attempt, a config given up, the search procedure's
// decisions, a state copy made or failed. The shell turns a call's events into
// the one line it reports (event_line); code that must react to what
// happened reads the events' kinds, never the line's words.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/base/ids.hpp"
#include "runtime/search/search_procedure.hpp"

namespace cerebro {

struct ControlEvent {
  enum class Kind {
    epoch_scored,       // config's epoch ended: train_loss, val_loss, val_accuracy, val_metrics
    diverged,           // config's loss became NaN/inf in epoch
    decision,           // the search procedure's decision (only those worth saying)
    pilot_failed,       // a proposed config failed its pilot check: error
    attempt_failed,     // unit failed attempt `count` of `limit`; it runs again
    config_gave_up,     // config failed after `count` attempts of unit: error
    config_failed,      // config failed for a reason of its own: error
    crew_waits,         // pipeline config waits for `count` idle workers; the cluster has `limit`
    state_copied,       // config took decision's source state and params
    state_copy_failed,  // config failed copying decision's source state: error
    gang_failed,        // gang `attempt_id` of config (`count` workers) failed; its units are pending again
    pipeline_failed,    // pipeline attempt `attempt_id` of unit failed
  };
  Kind kind = Kind::epoch_scored;
  ConfigId config = -1;
  int32_t epoch = 0;
  Unit unit;
  int64_t attempt_id = 0;
  int32_t count = 0;
  int32_t limit = 0;
  double train_loss = 0;
  double val_loss = 0;
  double val_accuracy = 0;
  std::map<std::string, double> val_metrics;  // the task's metrics by name, as UnitLogEntry::val_metrics
  std::optional<SearchDecision> decision;     // decision, state_copied, state_copy_failed
  std::string error;
};

// The events of one call, in the order they happened.
using ControlEvents = std::vector<ControlEvent>;

// The line a shell reports for one call's events: each event's words, a
// decision after "; " (e.g. "config 3 epoch 1: train_loss 0.5100 val_loss
// 0.4800 val_accuracy 0.8200; stop config 3 after epoch 1 (asha: ...)").
// Empty for no events.
std::string event_line(const ControlEvents& events);

// The first event of `kind`, if any.
const ControlEvent* find_event(const ControlEvents& events, ControlEvent::Kind kind);

}  // namespace cerebro
