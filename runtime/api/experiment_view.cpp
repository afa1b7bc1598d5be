#include "runtime/api/experiment_view.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <set>

#include "runtime/api/pareto_view.hpp"
#include "runtime/spec/spec_paths.hpp"
#include "runtime/store/run_summary.hpp"

namespace cerebro::api {

namespace {

std::string metric_of(const StateStore& store) { return store.get_meta("metric").value_or("val_accuracy"); }

// metric, paused, spec and the count of committed units.
void fill_overview(const ExperimentFacts& f, nlohmann::json& view) {
  view["metric"] = metric_of(f.store);
  view["paused"] = f.paused;
  view["spec"] = f.store.get_meta("spec").value_or("");
  int64_t done = 0;
  for (const auto& e : f.log())
    if (!e.rolled_back) ++done;
  view["units_done"] = done;
}

// Every config with its parameters, status, rank and validated epochs; the best.
void fill_configs(const ExperimentFacts& f, nlohmann::json& view) {
  const auto& log = f.log();
  auto ranked = rank_configs(f.store.configs(), log, stored_metric(f.store));  // a template metric keeps its goal
  const auto by_config = units_by_config(log);
  const std::vector<UnitLogEntry> none;
  const std::string spec_dir = stored_spec_dir(f.store);
  nlohmann::json configs = nlohmann::json::array();
  nlohmann::json best = nullptr;
  int rank = 0;
  for (const auto& s : ranked) {
    ++rank;
    nlohmann::json metric = s.metric ? nlohmann::json(*s.metric) : nlohmann::json(nullptr);
    auto params = params_as_submitted(s.params, spec_dir);
    if (best.is_null() && s.metric) best = {{"config", s.id}, {"metric", *s.metric}, {"params", params}};
    configs.push_back({{"config", s.id},
                       {"params", std::move(params)},
                       {"status", to_string(s.status)},
                       {"error", s.error},
                       {"metric", metric},
                       {"rank", s.metric ? nlohmann::json(rank) : nlohmann::json(nullptr)},
                       {"epochs", validated_epochs_json(by_config.count(s.id) ? by_config.at(s.id) : none, s.id)}});
  }
  view["configs"] = std::move(configs);
  view["best"] = std::move(best);
}

// Several objectives: the Pareto front (runtime/api/pareto_view.hpp)
// as "pareto": [{"config", "values"}], with "pareto_objectives" and
// "pareto_final"; an empty front and no objectives for one objective.
void fill_pareto(const ExperimentFacts& f, nlohmann::json& view) {
  auto pareto = pareto_of(f.store);
  view["pareto"] = pareto.is_null() ? nlohmann::json::array() : pareto["front"];
  view["pareto_objectives"] = pareto.is_null() ? nlohmann::json::array() : pareto["objectives"];
  view["pareto_final"] = !pareto.is_null() && pareto["final"].get<bool>();
}

// `path` relative to `dir` when it lies inside it: `dir`'s parts begin `path`'s (both are absolute and
// lexically normal, as the spec parser resolves them); nullopt otherwise.
std::optional<std::string> inside(const std::string& path, const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path file(path), folder = fs::path(dir).lexically_normal();
  if (dir.empty() || !file.is_absolute()) return std::nullopt;
  auto f = file.begin();
  for (auto d = folder.begin(); d != folder.end(); ++d, ++f) {
    if (d->empty() && std::next(d) == folder.end()) break;  // a trailing separator
    if (f == file.end() || *f != *d) return std::nullopt;
  }
  if (f == file.end()) return std::nullopt;  // the folder itself
  fs::path relative;
  for (; f != file.end(); ++f) relative /= *f;
  return relative.string();
}

}  // namespace

nlohmann::json params_as_submitted(const nlohmann::json& params, const std::string& spec_dir) {
  if (spec_dir.empty() || !params.is_object()) return params;
  nlohmann::json out = params;
  for (auto& [key, value] : out.items())
    if (value.is_string() && names_model_file(value.get_ref<const std::string&>()))
      if (auto relative = inside(value.get<std::string>(), spec_dir)) value = *relative;
  return out;
}

nlohmann::json params_on_server(const nlohmann::json& params, const std::string& spec_dir) {
  namespace fs = std::filesystem;
  if (spec_dir.empty() || !params.is_object()) return params;
  nlohmann::json out = params;
  for (auto& [key, value] : out.items()) {
    if (!value.is_string() || !names_model_file(value.get_ref<const std::string&>())) continue;
    const fs::path path(value.get<std::string>());
    if (path.is_relative()) value = (fs::path(spec_dir) / path).lexically_normal().string();
  }
  return out;
}

std::string stored_spec_dir(const StateStore& store) { return store.get_meta("spec_dir").value_or(""); }

// A finished captioning or detection run's best config on a few test images (summary.json best.examples);
// empty otherwise.
void fill_examples(const ExperimentFacts& f, nlohmann::json& view) {
  view["examples"] = nlohmann::json::array();
  if (auto stored = f.store.get_meta("examples")) {
    auto examples = nlohmann::json::parse(*stored, nullptr, false);
    if (examples.is_array()) view["examples"] = std::move(examples);
  }
}

const std::vector<ViewSection>& experiment_view_sections() {
  static const std::vector<ViewSection> sections = {
      {"overview", fill_overview},
      {"configs", fill_configs},
      {"pareto", fill_pareto},
      {"examples", fill_examples},
  };
  return sections;
}

nlohmann::json experiment_view(const ExperimentFacts& facts) {
  nlohmann::json view = nlohmann::json::object();
  for (const auto& section : experiment_view_sections()) section.fill(facts, view);
  return view;
}

nlohmann::json validated_epochs_json(const std::vector<UnitLogEntry>& log, ConfigId config) {
  std::set<int32_t> validated;
  for (const auto& e : log)
    if (e.config == config && e.has_validation && !e.rolled_back) validated.insert(e.epoch);
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& m : epoch_metrics(log, config)) {
    if (!validated.count(m.epoch)) continue;
    nlohmann::json epoch = {{"epoch", m.epoch},
                            {"train_loss", m.train_loss},
                            {"val_loss", m.val_loss},
                            {"val_accuracy", m.val_accuracy},
                            {"seconds", m.seconds}};
    // Every metric of the task (or template) by its name, as summary.json has them: "val_r2" ...
    for (const auto& [name, value] : named_values(m)) epoch[name] = value;
    epochs.push_back(std::move(epoch));
  }
  return epochs;
}

nlohmann::json units_view(const std::vector<UnitLogEntry>& log, int64_t since) {
  nlohmann::json units = nlohmann::json::array();
  const size_t first = since <= 0 ? 0 : std::min(log.size(), static_cast<size_t>(since));
  for (size_t i = first; i < log.size(); ++i) {
    const auto& e = log[i];
    units.push_back({{"seq", e.seq},
                     {"config", e.config},
                     {"partition", e.partition},
                     {"epoch", e.epoch},
                     {"worker", e.worker},
                     {"start_s", e.start_s},
                     {"end_s", e.end_s},
                     {"result_s", e.result_s},
                     {"worker_end_s", e.worker_end_s()},
                     {"train_s", e.train_s},
                     {"validate_s", e.validate_s},
                     {"restore_s", e.restore_s},
                     {"save_s", e.save_s},
                     {"state_bytes", e.state_bytes},
                     {"status", to_string(e.status)},
                     {"validated", e.has_validation},
                     {"rolled_back", e.rolled_back}});
  }
  return {{"units", std::move(units)}, {"since", since}, {"count", log.size()}};
}

}  // namespace cerebro::api
