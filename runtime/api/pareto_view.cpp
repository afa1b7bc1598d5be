#include "runtime/api/pareto_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/spec/objective_format.hpp"

namespace cerebro::api {

namespace {

struct Candidate {
  ConfigId config = 0;
  std::vector<double> values;  // per used objective, as measured
};

// a is no worse than b everywhere and better somewhere (`maximize` per objective).
bool dominates(const Candidate& a, const Candidate& b, const std::vector<bool>& maximize) {
  bool better = false;
  for (size_t k = 0; k < maximize.size(); ++k) {
    const double x = maximize[k] ? a.values[k] : -a.values[k];
    const double y = maximize[k] ? b.values[k] : -b.values[k];
    if (x < y) return false;
    better |= x > y;
  }
  return better;
}

// The live values of every config that validated an epoch, for the objectives `used`.
std::vector<Candidate> live_candidates(const StateStore& store, const std::vector<Objective>& used) {
  const auto shared = store.unit_log_shared();
  const auto& log = *shared;
  std::map<ConfigId, double> train_seconds;
  std::map<ConfigId, std::set<int32_t>> validated;
  for (const auto& e : log) {
    if (e.rolled_back) continue;
    train_seconds[e.config] += e.train_s;
    if (e.has_validation && e.status == UnitStatus::ok) validated[e.config].insert(e.epoch);
  }
  std::vector<Candidate> out;
  for (const auto& record : store.configs()) {
    if (record.status == ConfigStatus::failed || record.status == ConfigStatus::diverged) continue;
    auto epochs = validated.find(record.id);
    if (epochs == validated.end()) continue;
    std::optional<EpochMetrics> last;
    for (const auto& m : epoch_metrics(log, record.id))
      if (epochs->second.count(m.epoch)) last = m;
    if (!last) continue;
    Candidate c{record.id, {}};
    bool complete = true;
    for (const auto& o : used) {
      double value = std::nan("");
      if (o.metric) {
        value = metric_value(*o.metric, last->val_loss, last->val_accuracy, last->val_metrics);
      } else if (o.builtin == BuiltinObjective::train_seconds) {
        value = train_seconds[record.id];
      } else if (o.builtin == BuiltinObjective::parameters) {
        if (auto text = store.get_meta(fmt::format("parameters/{}", record.id)))
          value = std::strtod(text->c_str(), nullptr);
      }
      complete &= std::isfinite(value);
      c.values.push_back(value);
    }
    if (complete) out.push_back(std::move(c));
  }
  return out;
}

// The values the run measured at its end, for the objectives `used`.
std::vector<Candidate> final_candidates(const nlohmann::json& stored, const std::vector<Objective>& used) {
  std::vector<Candidate> out;
  for (const auto& item : stored) {
    Candidate c{item.value("config", -1), {}};
    bool complete = true;
    for (const auto& o : used) {
      const auto& v = item["values"];
      const bool known = v.contains(o.name) && v[o.name].is_number();
      complete &= known && std::isfinite(v[o.name].get<double>());
      c.values.push_back(known ? v[o.name].get<double>() : std::nan(""));
    }
    if (complete) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

nlohmann::json pareto_of(const StateStore& store) {
  auto text = store.get_meta("objectives");
  if (!text) return nullptr;
  auto listed = nlohmann::json::parse(*text, nullptr, false);
  if (!listed.is_array() || listed.size() < 2) return nullptr;
  auto final_values = store.get_meta("objective_values");
  const bool final = final_values.has_value();
  std::vector<Objective> used;
  nlohmann::json objectives = nlohmann::json::array();
  for (const auto& item : listed) {
    auto objective = parse_objective(item.value("name", std::string()));
    if (!objective) continue;  // a name this build does not know
    // inference_ms is measured when the run ends.
    const bool live = final || objective->builtin != BuiltinObjective::inference_ms;
    objectives.push_back(
        {{"name", objective->name}, {"direction", objective->maximize() ? "maximize" : "minimize"}, {"live", live}});
    if (live) used.push_back(*objective);
  }
  std::vector<Candidate> candidates;
  if (final) {
    auto stored = nlohmann::json::parse(*final_values, nullptr, false);
    if (stored.is_array()) candidates = final_candidates(stored, used);
  } else {
    candidates = live_candidates(store, used);
  }
  std::vector<bool> maximize;
  for (const auto& o : used) maximize.push_back(o.maximize());
  std::vector<const Candidate*> front;
  for (const auto& c : candidates) {
    bool dominated = false;
    for (const auto& other : candidates) dominated |= dominates(other, c, maximize);
    if (!dominated) front.push_back(&c);
  }
  if (!used.empty()) {
    std::stable_sort(front.begin(), front.end(), [&](const Candidate* a, const Candidate* b) {
      return maximize[0] ? a->values[0] > b->values[0] : a->values[0] < b->values[0];
    });
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const Candidate* c : front) {
    nlohmann::json values = nlohmann::json::object();
    for (size_t k = 0; k < used.size(); ++k) values[used[k].name] = c->values[k];
    rows.push_back({{"config", c->config}, {"values", values}});
  }
  // How each live objective's column is printed (one rule for every table).
  for (auto& o : objectives) {
    if (!o["live"].get<bool>()) continue;
    const auto k = static_cast<size_t>(
        std::find_if(used.begin(), used.end(), [&](const Objective& u) { return u.name == o["name"]; }) - used.begin());
    std::vector<double> column;
    for (const Candidate* c : front) column.push_back(c->values[k]);
    o["decimals"] = objective_decimals(used[k], column);
  }
  return {{"objectives", objectives}, {"final", final}, {"front", rows}};
}

}  // namespace cerebro::api
