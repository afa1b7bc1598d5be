#pragma once
// Which hyper-parameters population based training perturbs, and within what
// ranges (runtime/search/pbt.hpp has the procedure). In the spec layer so that
// the spec's checks (search_registry.hpp) can refuse a [space] with nothing
// to perturb before any search is built.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"

namespace cerebro {

// A perturbed hyper-parameter's range: [low, high], rounded when integer.
struct PerturbRange {
  double low = 0;
  double high = 0;
  bool integer = false;
};

// The hyper-parameters PBT perturbs and their ranges, from the [space]:
// `keys` as given, each a numeric [space] entry with more than one value (a
// uniform, loguniform or int_uniform distribution: [low, high]; a list of
// numbers: [min, max]; integer when all its values are). With `keys` empty:
// every uniform or loguniform distribution and every list of numbers with two
// or more distinct values at least one of which is a float (integer lists are
// left alone by default: they are often layer sizes, which must not change
// under copied weights). Errors name the key, e.g. "perturb_keys names
// 'model', which is not numeric in [space]", or say there is nothing to perturb.
Result<std::map<std::string, PerturbRange>> perturb_ranges(const nlohmann::json& space,
                                                           const std::vector<std::string>& keys);

}  // namespace cerebro
