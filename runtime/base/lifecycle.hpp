#pragma once
// The outcomes of a training unit, a config and an experiment. Code compares
// the enums; their text (to_string, parse_*) appears only where a status is
// written or read: the state store's records, summary.json, metrics.csv,
// leaderboards and status output, which keep today's words exactly.

#include <iosfwd>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "runtime/base/status.hpp"

namespace cerebro {

// What a worker reports for one unit, and what the unit log records for a
// committed one (ok or diverged; a failed unit is never committed).
enum class UnitStatus {
  ok,        // trained; the state is the config's new state
  diverged,  // the loss became NaN/inf: the config is finished as diverged
  failed,    // the unit could not run (bad state, exception); it may be retried
};

// A config's outcome: the experiment's record of it (ExperimentControl's
// outcomes, the state store's config records, the leaderboard). MopBook's
// ConfigState is the scheduling view of the same config: pending_epoch and
// awaiting_decision are `running` here, finished is `completed`, stopped and
// failed are the same; `diverged` is failed in the book, with its own outcome.
enum class ConfigStatus { running, completed, diverged, failed, stopped };

// An experiment as the coordinator lists it.
enum class ExperimentStatus {
  waiting,  // known from its run directory, to be resumed
  running,
  completed,
  failed,
};

// "ok", "diverged", "failed"
std::string to_string(UnitStatus status);
std::optional<UnitStatus> parse_unit_status(const std::string& text);
// "running", "completed", "diverged", "failed", "stopped"
std::string to_string(ConfigStatus status);
std::optional<ConfigStatus> parse_config_status(const std::string& text);
// "waiting", "running", "completed", "failed"
std::string to_string(ExperimentStatus status);
std::optional<ExperimentStatus> parse_experiment_status(const std::string& text);

// A status read from a stored record (the state store, summary.json):
// invalid_argument for a value that is not one of the words above (a record
// of another build, or damaged).
Result<UnitStatus> unit_status_from_json(const nlohmann::json& value);
Result<ConfigStatus> config_status_from_json(const nlohmann::json& value);

std::ostream& operator<<(std::ostream& os, UnitStatus status);
std::ostream& operator<<(std::ostream& os, ConfigStatus status);
std::ostream& operator<<(std::ostream& os, ExperimentStatus status);

// Diverged or failed: the config has no usable result (the leaderboard ranks
// it last, a restart does not train it on).
inline bool config_failed(ConfigStatus status) {
  return status == ConfigStatus::diverged || status == ConfigStatus::failed;
}

}  // namespace cerebro
