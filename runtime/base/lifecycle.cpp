#include "runtime/base/lifecycle.hpp"

#include <array>
#include <ostream>

#include <nlohmann/json.hpp>

#include "runtime/base/enum_names.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {
namespace {

constexpr std::array<EnumName<UnitStatus>, 3> kUnitStatusNames = {
    {{UnitStatus::ok, "ok"}, {UnitStatus::diverged, "diverged"}, {UnitStatus::failed, "failed"}}};
constexpr std::array<EnumName<ConfigStatus>, 5> kConfigStatusNames = {{{ConfigStatus::running, "running"},
                                                                       {ConfigStatus::completed, "completed"},
                                                                       {ConfigStatus::diverged, "diverged"},
                                                                       {ConfigStatus::failed, "failed"},
                                                                       {ConfigStatus::stopped, "stopped"}}};
constexpr std::array<EnumName<ExperimentStatus>, 4> kExperimentStatusNames = {
    {{ExperimentStatus::waiting, "waiting"},
     {ExperimentStatus::running, "running"},
     {ExperimentStatus::completed, "completed"},
     {ExperimentStatus::failed, "failed"}}};

}  // namespace

std::string to_string(UnitStatus status) { return enum_name(kUnitStatusNames, status); }
std::string to_string(ConfigStatus status) { return enum_name(kConfigStatusNames, status); }
std::string to_string(ExperimentStatus status) { return enum_name(kExperimentStatusNames, status); }

std::optional<UnitStatus> parse_unit_status(const std::string& text) {
  return enum_named<UnitStatus>(kUnitStatusNames, text);
}
std::optional<ConfigStatus> parse_config_status(const std::string& text) {
  return enum_named<ConfigStatus>(kConfigStatusNames, text);
}
std::optional<ExperimentStatus> parse_experiment_status(const std::string& text) {
  return enum_named<ExperimentStatus>(kExperimentStatusNames, text);
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
