#pragma once
// Turning a search space (see runtime/param_value.hpp) into concrete configs.
// Both expanders are pure functions of their inputs: the same space and seed
// give the same configs on every platform.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/spec/spec.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

struct ConfigParams {
  int32_t id;
  nlohmann::json params;  // object: key -> concrete value
};

// kMaxConfigs, the most configs a search may start, is in runtime/spec/spec.hpp.

// Cartesian product of all lists; keys iterated in sorted order, the last key
// varies fastest; ids 0..n-1. A scalar entry is a one-element list; a
// distribution is an error (only random search samples those).
Result<std::vector<ConfigParams>> expand_grid(const nlohmann::json& space);

// `samples` configs; for each config in turn, each key (sorted order) is drawn
// independently from one std::mt19937_64 seeded with `seed`: a list by uniform
// choice, distributions as documented in param_value.hpp. Samples are drawn
// with replacement, so small discrete spaces can repeat a config.
Result<std::vector<ConfigParams>> sample_random(const nlohmann::json& space, int samples, uint64_t seed);

// The configs of a spec, by spec.search: grid -> expand_grid; random and asha
// -> sample_random(samples); pbt -> sample_random(population); hyperband ->
// sample_random(hyperband_config_count(max_epochs, eta, brackets)), ids in
// bracket order (runtime/search/hyperband.hpp); tpe -> none (its procedure
// proposes them as the search goes). Always with spec.seed.
Result<std::vector<ConfigParams>> configs_for(const ExperimentSpec& spec);

// A short one-line description, "model=cnn lr=0.001 batch_size=64": the
// common keys first (model, lr, batch_size, optimizer), then the others in
// sorted order; a TorchScript model path is shortened to its file name.
std::string describe_params(const nlohmann::json& params);

}  // namespace cerebro
