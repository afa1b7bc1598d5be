#pragma once
// Several objectives at a run's end (spec.objectives, runtime/spec/objective.hpp):
// each ranked config's value of every objective, and the Pareto front among
// the configs that validated (not failed or diverged), for summary.json
// ("objectives", "pareto_front", and "objectives" in each config) and the
// leaderboard printed after a run.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/run/run_finisher.hpp"
#include "runtime/spec/spec.hpp"
#include "runtime/store/run_summary.hpp"

namespace cerebro {

struct ObjectiveValues {
  ConfigId id = 0;
  nlohmann::json params;
  std::vector<double> values;  // one per objective, in the spec's order, as measured
  bool on_front = false;
};

// parameters and inference_ms are measured on each config's latest state
// (TrainedModels::cost); train_seconds sums its units' train_s.
Result<std::vector<ObjectiveValues>> objective_values(const ExperimentSpec& spec, const StateStore& store,
                                                      const std::vector<Standing>& ranked,
                                                      const std::vector<UnitLogEntry>& log, TrainedModels& models);

// Adds "objectives" ([{name, direction}]), "pareto_front" ([{id, params,
// values: {name: value}}], best first by the run's metric) and each config's
// "objectives" ({name: value}) to a summary.
void add_objectives(nlohmann::json& summary, const ExperimentSpec& spec, const std::vector<ObjectiveValues>& values);

// What the run keeps in its store for the live Pareto front (the HTTP API,
// the dashboard and the REPL read it: runtime/api/pareto_view.hpp): the
// objectives (meta "objectives", when the run starts), each config's
// parameter count (meta parameters_meta_key(id), when an objective is
// `parameters`) and, at the end, every objective's value per config (meta
// "objective_values").
nlohmann::json objectives_json(const ExperimentSpec& spec);  // [{"name", "direction"}]
bool has_objective(const ExperimentSpec& spec, BuiltinObjective builtin);
std::string parameters_meta_key(ConfigId id);  // "parameters/<id>"
nlohmann::json objective_values_json(const ExperimentSpec& spec, const std::vector<ObjectiveValues>& values);

// The Pareto front of a summary made with add_objectives, as a text table;
// empty when the summary has none.
std::string format_pareto_front(const nlohmann::json& summary);

}  // namespace cerebro
