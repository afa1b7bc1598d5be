#pragma once
// The Pareto front of an experiment with several objectives (docs/SEARCH.md,
// "Several objectives": `metric = ["val_accuracy", "parameters"]`), read from its state store while
// it runs and after it ends, for the HTTP API's experiment view, the
// dashboard and the REPL's leaderboard (top).
//
// What the run keeps for it (runtime/run/objectives.hpp writes them):
//   meta "objectives"        [{"name", "direction"}], the spec's objectives
//   meta "parameters/<id>"   a config's trainable parameters, when an objective is `parameters`
//   meta "objective_values"  at the end: [{"config", "values": {name: value}}], every
//                            objective measured (inference_ms included)
// While the experiment runs, a config's values are its last validated
// epoch's metrics, its training time so far (its committed units' train_s)
// and its parameter count; inference_ms is measured at the end only, so the
// live front leaves it out ("live": false for it). Configs that failed or
// diverged, or have not validated an epoch yet, are not on any front.

#include <nlohmann/json.hpp>

#include "runtime/store/state_store.hpp"

namespace cerebro::api {

// {"objectives": [{"name", "direction", "live", "decimals"}], "final": bool,
//  "front": [{"config", "values": {name: value}}]} with the front ordered by
// the first objective, best first; null for an experiment with one objective.
// "decimals" (live objectives only) is how many decimals the column of that
// objective's values on the front is printed with (objective_decimals in
// runtime/spec/objective_format.hpp), for the dashboard and the REPL.
nlohmann::json pareto_of(const StateStore& store);

}  // namespace cerebro::api
