#pragma once
// Warm start ([experiment] warm_start = ["RUN_DIR", ...], docs/SEARCH.md):
// the finished configs of earlier runs over the same [space] seed a new
// search. tpe takes them as observations before its own; random, asha and pbt
// put the best of them in place of their first sampled configs (at most half);
// with from_checkpoint = true such a config starts from its earlier run's
// latest checkpoint instead of a fresh initialisation.

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/ids.hpp"
#include "runtime/base/status.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/search/tpe.hpp"
#include "runtime/spec/spec.hpp"

namespace cerebro {

struct WarmConfig {
  std::string run_dir;  // the earlier run
  ConfigId id = 0;      // its id there
  nlohmann::json params;
  // Higher is better, by this spec's metric, after the last epoch it
  // validated; -inf for a config that diverged.
  double score = -std::numeric_limits<double>::infinity();
};

// The finished configs (completed, stopped early or diverged; not failed
// ones, whose failure may be the machine's) of every run in spec.warm_start,
// in the order given, each run's by id. Errors: a directory that is not a
// run ("[experiment] warm_start: DIR: ..."), a run over another [space]
// (naming the keys that differ). Empty for a spec without warm_start.
Result<std::vector<WarmConfig>> load_warm_start(const ExperimentSpec& spec);

// On a coordinator, warm_start may name its experiments by id
// (warm_start = ["mnist-20261201T1502-3"]): an entry written as a bare name
// (no '/') that is the id of one of its experiments becomes that
// experiment's run directory; other entries stay directories. Errors, naming
// the entry: a bare name that is neither an experiment of the coordinator nor
// a run directory, an experiment that has not finished (its store is the
// runner's while it trains).
struct KnownExperiment {
  std::string run_dir;
  bool finished = false;
};
using ExperimentLookup = std::function<std::optional<KnownExperiment>(const std::string& id)>;
Status resolve_warm_start_ids(ExperimentSpec& spec, const ExperimentLookup& experiment);

// The run keeps what it was warm-started with (store meta "warm_start"), so a
// resume does not depend on the earlier runs still being there.
nlohmann::json to_json(const std::vector<WarmConfig>& warm);
// invalid_argument for a document that is not that list (or not JSON: a
// value parsed with allow_exceptions = false and discarded).
Result<std::vector<WarmConfig>> warm_configs_from_json(const nlohmann::json& j);

// As TPE observations (one score each).
std::vector<TpeObservation> warm_observations(const std::vector<WarmConfig>& warm);

// random, asha, pbt: the best warm configs (score order, then as loaded) take
// the places of the first configs, at most ceil(n / 2) of the n. Returns for
// each config id it replaced the warm config it now is.
std::vector<std::pair<ConfigId, WarmConfig>> seed_configs(std::vector<ConfigParams>& configs,
                                                          const std::vector<WarmConfig>& warm);

// The warm config with exactly these params, if any (from_checkpoint).
const WarmConfig* find_warm_config(const std::vector<WarmConfig>& warm, const nlohmann::json& params);

}  // namespace cerebro
