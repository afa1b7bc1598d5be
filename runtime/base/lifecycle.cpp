#include "runtime/base/lifecycle.hpp"

#include <ostream>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"

namespace cerebro {
namespace {

// The first value of Enum whose text is `text`; `last` is the highest value.
template <class Enum>
std::optional<Enum> parse_enum(const std::string& text, Enum last) {
  for (int i = 0; i <= static_cast<int>(last); ++i) {
    if (to_string(static_cast<Enum>(i)) == text) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

}  // namespace

std::string to_string(UnitStatus status) {
  switch (status) {
    case UnitStatus::ok: return "ok";
    case UnitStatus::diverged: return "diverged";
    case UnitStatus::failed: return "failed";
  }
  return "unknown";
}

std::string to_string(ConfigStatus status) {
  switch (status) {
    case ConfigStatus::running: return "running";
    case ConfigStatus::completed: return "completed";
    case ConfigStatus::diverged: return "diverged";
    case ConfigStatus::failed: return "failed";
    case ConfigStatus::stopped: return "stopped";
  }
  return "unknown";
}

std::string to_string(ExperimentStatus status) {
  switch (status) {
    case ExperimentStatus::waiting: return "waiting";
    case ExperimentStatus::running: return "running";
    case ExperimentStatus::completed: return "completed";
    case ExperimentStatus::failed: return "failed";
  }
  return "unknown";
}

std::optional<UnitStatus> parse_unit_status(const std::string& text) { return parse_enum(text, UnitStatus::failed); }
std::optional<ConfigStatus> parse_config_status(const std::string& text) {
  return parse_enum(text, ConfigStatus::stopped);
}
std::optional<ExperimentStatus> parse_experiment_status(const std::string& text) {
  return parse_enum(text, ExperimentStatus::failed);
}

Result<UnitStatus> unit_status_from_json(const nlohmann::json& value) {
  if (value.is_string()) {
    if (auto status = parse_unit_status(value.get<std::string>())) return *status;
  }
  return Status::invalid_argument("a stored unit status is not ok, diverged or failed: " + value.dump());
}

Result<ConfigStatus> config_status_from_json(const nlohmann::json& value) {
  if (value.is_string()) {
    if (auto status = parse_config_status(value.get<std::string>())) return *status;
  }
  return Status::invalid_argument("a stored config status is not running, completed, diverged, failed or stopped: " +
                                  value.dump());
}

std::ostream& operator<<(std::ostream& os, UnitStatus status) { return os << to_string(status); }
std::ostream& operator<<(std::ostream& os, ConfigStatus status) { return os << to_string(status); }
std::ostream& operator<<(std::ostream& os, ExperimentStatus status) { return os << to_string(status); }

}  // namespace cerebro
