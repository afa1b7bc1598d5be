#pragma once
// Cost priors: what a config's unit is expected to cost before any of its
// units ran, so a scheduler that orders by remaining work (critical_path)
// does not take a cnn for as cheap as an mlp at the start of a run.
//
// The prior is the model's training cost per example (forward, backward and
// optimizer step), measured by a ModelCostProbe on a few batches when the
// experiment starts; configs whose cost-relevant hyper-parameters are equal
// (cost_key: the architecture and batch size, not the learning rate) share
// one measurement. A unit's prior time is that cost x the unit's examples /
// the worker's speed relative to where the probe ran (prior_unit_seconds).
// The policy uses the prior only until the config's own units are measured.
//
// Plain code: the probe that needs LibTorch is models/cost_probe
// (models::TorchCostProbe), handed in by the run layer.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

class ExperimentControl;
class SchedulingPolicy;

// Measures what training one example of a model costs on this machine.
class ModelCostProbe {
 public:
  virtual ~ModelCostProbe() = default;
  // Seconds per training example (forward, backward, optimizer step) of the
  // model `params` describes, at its batch size, on one thread. An error when
  // the model cannot be built or run.
  virtual Result<double> seconds_per_example(const nlohmann::json& params) = 0;
};

// The hyper-parameters that decide a unit's cost: `params` without the ones
// that only change the numbers (lr, weight_decay, momentum, nesterov), as
// compact JSON. Configs with the same key are measured once.
std::string cost_key(const nlohmann::json& params);

// A unit's prior seconds: `seconds_per_example` (measured where the probe
// ran) x `examples` x probe_speed / worker_speed (speeds in any one unit, e.g.
// an agent's calibrated GFLOP/s; a speed <= 0 counts as equal to the probe's).
double prior_unit_seconds(double seconds_per_example, int64_t examples, double probe_speed = 0,
                          double worker_speed = 0);

class CostPriors {
 public:
  // Probes each distinct cost_key of `configs` once. A config whose probe
  // fails gets no prior (the policy treats it as before: the mean of the
  // measured ones); the first error is returned alongside in `problems`.
  struct Estimated;
  static Estimated estimate(const std::vector<std::pair<ConfigId, nlohmann::json>>& configs, ModelCostProbe& probe);

  // invalid_argument (and no prior set) unless seconds_per_example is a
  // positive, finite number.
  [[nodiscard]] Status set(ConfigId c, double seconds_per_example);
  bool has(ConfigId c) const { return seconds_.count(c) > 0; }
  // Nothing for a config without a prior.
  std::optional<double> seconds_per_example(ConfigId c) const;
  const std::map<ConfigId, double>& all() const { return seconds_; }
  bool empty() const { return seconds_.empty(); }

  // Hands every prior to the policy (SchedulingPolicy::set_cost_prior).
  void apply_to(SchedulingPolicy& policy) const;
  void apply_to(ExperimentControl& control) const;

  // {"<config>": seconds per example, ...}: kept in the run's store (meta
  // "cost_priors") so a resumed run and `cerebro simulate --from-run` use the
  // same priors. from_json names what is wrong with a malformed object.
  nlohmann::json to_json() const;
  static Result<CostPriors> from_json(const nlohmann::json& j);

 private:
  std::map<ConfigId, double> seconds_;
};

struct CostPriors::Estimated {
  CostPriors priors;
  int probes = 0;                     // distinct cost keys measured
  std::vector<std::string> problems;  // "config N: why", one per config without a prior
};

}  // namespace cerebro
