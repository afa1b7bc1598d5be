#pragma once
// The search procedure of an experiment spec: grid and random train every
// config for its planned epochs (FixedEpochsProcedure); asha, hyperband and pbt
// build their procedure from the spec's keys (docs/SPEC.md, "Search
// procedures"). `configs` are the spec's configs, configs_for(spec).

#include <functional>
#include <memory>
#include <vector>

#include "runtime/search/search_procedure.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/search/tpe.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

// What the run adds to the spec for the searches that need it (tpe).
struct SearchSetup {
  // Configs in flight when [experiment] in_flight is not given: the run's
  // workers ([cluster] workers, else the partitions, which are one per worker
  // by default), fixed for the run so a resume proposes the same.
  int default_in_flight = 1;
  // Warm start: finished configs of earlier runs (runtime/run/warm_start.hpp).
  std::vector<TpeObservation> warm;
  // The trainable parameters of a config's model (the objective `parameters`
  // for tpe): the run's model builder, which needs LibTorch; null elsewhere.
  std::function<Result<double>(const nlohmann::json& params)> parameters_of;
};

// Errors name the spec key at fault, e.g. "[experiment] search = \"hyperband\"
// needs 143 configs for max_epochs 81 and eta 3, got 10".
Result<std::unique_ptr<SearchProcedure>> make_search_procedure(const ExperimentSpec& spec,
                                                               const std::vector<ConfigParams>& configs,
                                                               const SearchSetup& setup = {});

}  // namespace cerebro
