#pragma once
// The search procedure of an experiment spec: grid and random train every
// config for its planned epochs (FixedEpochsProcedure); asha, hyperband and pbt
// build their procedure from the spec's keys (docs/SPEC.md, "Search
// procedures"). `configs` are the spec's configs, configs_for(spec).

#include <memory>
#include <vector>

#include "runtime/search/search_procedure.hpp"
#include "runtime/search/search_space.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/base/status.hpp"

namespace cerebro {

// Errors name the spec key at fault, e.g. "[experiment] search = \"hyperband\"
// needs 143 configs for max_epochs 81 and eta 3, got 10".
Result<std::unique_ptr<SearchProcedure>> make_search_procedure(const ExperimentSpec& spec,
                                                               const std::vector<ConfigParams>& configs);

}  // namespace cerebro
