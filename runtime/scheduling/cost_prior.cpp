#include "runtime/scheduling/cost_prior.hpp"

#include <cmath>

#include <fmt/format.h>

#include "runtime/scheduling/experiment_control.hpp"
#include "runtime/scheduling/scheduling_policy.hpp"

namespace cerebro {

std::string cost_key(const nlohmann::json& params) {
  if (!params.is_object()) return params.dump();
  nlohmann::json key = params;
  // Numbers the model is trained with, not what it costs to train it.
  for (const char* numeric : {"lr", "weight_decay", "momentum", "nesterov"}) key.erase(numeric);
  return key.dump();  // nlohmann's object keys are sorted: equal params, equal keys
}

double prior_unit_seconds(double seconds_per_example, int64_t examples, double probe_speed, double worker_speed) {
  double relative = probe_speed > 0 && worker_speed > 0 ? probe_speed / worker_speed : 1.0;
  return seconds_per_example * static_cast<double>(examples) * relative;
}

CostPriors::Estimated CostPriors::estimate(const std::vector<std::pair<ConfigId, nlohmann::json>>& configs,
                                           ModelCostProbe& probe) {
  Estimated out;
  std::map<std::string, Result<double>> measured;  // by cost key
  for (const auto& [c, params] : configs) {
    const std::string key = cost_key(params);
    auto it = measured.find(key);
    if (it == measured.end()) {
      it = measured.emplace(key, probe.seconds_per_example(params)).first;
      ++out.probes;
    }
    const Result<double>& seconds = it->second;
    if (!seconds.ok()) {
      out.problems.push_back(fmt::format("config {}: {}", c, seconds.error()));
    } else if (!out.priors.set(c, *seconds).ok()) {  // not a positive number
      out.problems.push_back(fmt::format("config {}: the probe measured {} s per example", c, *seconds));
    }
  }
  return out;
}

Status CostPriors::set(ConfigId c, double seconds_per_example) {
  if (!(seconds_per_example > 0) || !std::isfinite(seconds_per_example)) {
    return Status::invalid_argument(
        fmt::format("cost prior of config {}: {} s per example is not a positive number", c, seconds_per_example));
  }
  seconds_[c] = seconds_per_example;
  return Status::ok_status();
}

std::optional<double> CostPriors::seconds_per_example(ConfigId c) const {
  auto it = seconds_.find(c);
  if (it == seconds_.end()) return std::nullopt;
  return it->second;
}

void CostPriors::apply_to(SchedulingPolicy& policy) const {
  for (const auto& [c, seconds] : seconds_) policy.set_cost_prior(c, seconds);
}

void CostPriors::apply_to(ExperimentControl& control) const {
  for (const auto& [c, seconds] : seconds_) control.set_cost_prior(c, seconds);
}

nlohmann::json CostPriors::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [c, seconds] : seconds_) j[std::to_string(c)] = seconds;
  return j;
}

Result<CostPriors> CostPriors::from_json(const nlohmann::json& j) {
  if (!j.is_object())
    return Status::invalid_argument("cost priors: expected an object of config id -> seconds per example");
  CostPriors priors;
  for (const auto& [key, value] : j.items()) {
    ConfigId c = 0;
    size_t used = 0;
    try {
      c = static_cast<ConfigId>(std::stol(key, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || key.empty())
      return Status::invalid_argument(fmt::format("cost priors: key '{}' is not a config id", key));
    if (!value.is_number() || !priors.set(c, value.get<double>()).ok()) {
      return Status::invalid_argument(
          fmt::format("cost priors: config {}: expected a positive number of seconds, got {}", c, value.dump()));
    }
  }
  return priors;
}

}  // namespace cerebro
