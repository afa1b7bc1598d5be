#include "runtime/run/objectives.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "runtime/search/tpe.hpp"
#include "runtime/spec/objective_format.hpp"

namespace cerebro {

Result<std::vector<ObjectiveValues>> objective_values(const ExperimentSpec& spec, const StateStore& store,
                                                      const std::vector<Standing>& ranked,
                                                      const std::vector<UnitLogEntry>& log, TrainedModels& models) {
  std::map<ConfigId, double> train_seconds;
  for (const auto& e : log)
    if (!e.rolled_back) train_seconds[e.config] += e.train_s;
  bool needs_cost = false;
  for (const auto& o : spec.objectives)
    needs_cost |= o.builtin == BuiltinObjective::parameters || o.builtin == BuiltinObjective::inference_ms;
  std::vector<ObjectiveValues> out;
  for (const auto& s : ranked) {
    if (!s.metric || s.status == ConfigStatus::failed || s.status == ConfigStatus::diverged) continue;
    TrainedModels::Cost cost;
    if (needs_cost) {
      auto state = store.latest_state(s.id);
      if (!state.ok()) return state.status().with_context(fmt::format("config {}", s.id));
      auto measured = models.cost(s.params, *state);
      if (!measured.ok()) return measured.status().with_context(fmt::format("config {}", s.id));
      cost = *measured;
    }
    ObjectiveValues v{s.id, s.params, {}, false};
    const auto& last = s.epochs.back();
    for (const auto& o : spec.objectives) {
      if (o.metric) {
        v.values.push_back(metric_value(*o.metric, last.val_loss, last.val_accuracy, last.val_metrics));
      } else if (o.builtin == BuiltinObjective::parameters) {
        v.values.push_back(static_cast<double>(cost.parameters));
      } else if (o.builtin == BuiltinObjective::train_seconds) {
        v.values.push_back(train_seconds[s.id]);
      } else {
        v.values.push_back(cost.inference_ms);
      }
    }
    out.push_back(std::move(v));
  }
  // Non-dominated sorting with every objective turned "higher is better".
  std::vector<std::vector<double>> scores;
  for (const auto& v : out) {
    std::vector<double> row;
    for (size_t k = 0; k < spec.objectives.size(); ++k)
      row.push_back(spec.objectives[k].maximize() ? v.values[k] : -v.values[k]);
    scores.push_back(std::move(row));
  }
  const auto ranks = pareto_ranks(scores);
  for (size_t i = 0; i < out.size(); ++i) out[i].on_front = ranks[i] == 0;
  return out;
}

namespace {

nlohmann::json named(const ExperimentSpec& spec, const ObjectiveValues& v) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t k = 0; k < spec.objectives.size(); ++k) j[spec.objectives[k].name] = v.values[k];
  return j;
}

}  // namespace

nlohmann::json objectives_json(const ExperimentSpec& spec) {
  nlohmann::json objectives = nlohmann::json::array();
  for (const auto& o : spec.objectives)
    objectives.push_back({{"name", o.name}, {"direction", o.maximize() ? "maximize" : "minimize"}});
  return objectives;
}

bool has_objective(const ExperimentSpec& spec, BuiltinObjective builtin) {
  for (const auto& o : spec.objectives)
    if (o.builtin == builtin) return true;
  return false;
}

std::string parameters_meta_key(ConfigId id) { return fmt::format("parameters/{}", id); }

nlohmann::json objective_values_json(const ExperimentSpec& spec, const std::vector<ObjectiveValues>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& v : values) out.push_back({{"config", v.id}, {"values", named(spec, v)}});
  return out;
}

void add_objectives(nlohmann::json& summary, const ExperimentSpec& spec, const std::vector<ObjectiveValues>& values) {
  summary["objectives"] = objectives_json(spec);
  auto named = [&](const ObjectiveValues& v) { return cerebro::named(spec, v); };
  nlohmann::json front = nlohmann::json::array();
  for (const auto& v : values)  // `values` follow the ranking: the front is best first
    if (v.on_front) front.push_back({{"id", v.id}, {"params", v.params}, {"values", named(v)}});
  summary["pareto_front"] = front;
  std::map<ConfigId, const ObjectiveValues*> by_id;
  for (const auto& v : values) by_id[v.id] = &v;
  for (auto& c : summary["configs"]) {
    auto it = by_id.find(c.value("id", -1));
    c["objectives"] = it == by_id.end() ? nlohmann::json(nullptr) : named(*it->second);
  }
}

std::string format_pareto_front(const nlohmann::json& summary) {
  if (!summary.contains("pareto_front") || !summary.contains("objectives")) return {};
  std::string out = "Pareto front (";
  std::vector<std::string> names;
  for (const auto& o : summary["objectives"]) {
    names.push_back(o["name"].get<std::string>());
    out += fmt::format("{}{} {}", names.size() > 1 ? ", " : "", names.back(),
                       parse_goal(o["direction"].get<std::string>()) == Goal::maximize ? "max" : "min");
  }
  out += fmt::format("): {} config(s)\n", summary["pareto_front"].size());
  out += fmt::format("{:>6}", "config");
  for (const auto& n : names) out += fmt::format("  {:>14}", n);
  out += "\n";
  std::vector<int> decimals;  // one rule for every Pareto table (runtime/spec/objective_format.hpp)
  for (const auto& n : names) {
    std::vector<double> column;
    for (const auto& c : summary["pareto_front"]) column.push_back(c["values"][n].get<double>());
    auto objective = parse_objective(n);
    decimals.push_back(objective ? objective_decimals(*objective, column) : 4);
  }
  for (const auto& c : summary["pareto_front"]) {
    out += fmt::format("{:>6}", c["id"].get<int>());
    for (size_t k = 0; k < names.size(); ++k)
      out += fmt::format("  {:>14}", format_objective_value(c["values"][names[k]].get<double>(), decimals[k]));
    out += "\n";
  }
  return out;
}

}  // namespace cerebro
