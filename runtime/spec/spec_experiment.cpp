// [experiment] and [space]: the run, its search and metric or objectives, and
// the hyper-parameters to search (runtime/spec/spec_section.hpp).
#include "runtime/spec/spec_section.hpp"

#include "datasets/task_kind.hpp"
#include "runtime/spec/spec_paths.hpp"

namespace cerebro::spec_detail {

namespace {

// TorchScript models are named by a path ending in ".pt", relative to the spec.
void resolve_model_paths(json& entry, const PathBase& base) {
  if (entry.is_string() && names_model_file(entry.get<std::string>())) {
    entry = resolve_input_path(base, entry.get<std::string>());
  } else if (entry.is_array()) {
    for (auto& item : entry)
      if (item.is_string()) resolve_model_paths(item, base);
  } else if (is_distribution(entry) && entry.contains("values")) {
    resolve_model_paths(entry["values"], base);
  }
}

// [experiment] metric as a list: several objectives (objective.hpp), distinct names, at least one metric of
// the task, which ranks the configs (the first such).
void read_objectives(Section& s, const toml::array& list, ExperimentSpec& spec) {
  const auto& quantities = task_quantities(spec.task);
  std::vector<std::string> seen;
  bool ok = list.size() >= 2;
  if (!ok) s.report("metric", "as a list needs two or more objectives (give one name as a string)");
  for (const auto& item : list) {
    if (!ok) break;
    const std::string name = item.is_string() ? item.as_string()->get() : std::string();
    auto objective = parse_objective(name);
    if (!objective) {
      s.report("metric", fmt::format("has an unknown objective {}: objectives are {}",
                                     item.is_string() ? "\"" + name + "\"" : describe_node(item),
                                     quoted_alternatives(objective_names())));
      ok = false;
    } else if (objective->metric &&
               std::find(quantities.begin(), quantities.end(), objective->metric->quantity()) == quantities.end()) {
      std::vector<std::string> task_names;
      for (const auto& q : quantities) task_names.push_back("val_" + q);
      s.report("metric", fmt::format("has objective \"{}\", which is not computed for task {} (its metrics: {})", name,
                                     datasets::to_string(spec.task), fmt::join(task_names, ", ")));
      ok = false;
    } else if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      s.report("metric", fmt::format("names \"{}\" twice", name));
      ok = false;
    } else {
      seen.push_back(name);
      spec.objectives.push_back(*objective);
    }
  }
  auto task = std::find_if(spec.objectives.begin(), spec.objectives.end(),
                           [](const Objective& o) { return o.metric.has_value(); });
  if (ok && task == spec.objectives.end()) {
    std::vector<std::string> task_names;
    for (const auto& q : quantities) task_names.push_back("val_" + q);
    s.report("metric", fmt::format("needs a task metric among its objectives ({}) to rank configs by",
                                   quoted_alternatives(task_names)));
  }
  if (!ok || task == spec.objectives.end())
    spec.objectives.clear();
  else
    spec.metric = *task->metric;
}

// [experiment] metric: a metric of the task, or with metric_goal a training template's own metric; or a
// list of objectives.
void read_metric(Section& s, ExperimentSpec& spec) {
  std::string goal;
  s.read_string("metric_goal", goal, {"maximize", "minimize"});
  spec.metric = default_metric(spec.task);
  if (!s.has("metric")) {
    if (s.has("metric_goal")) s.report("metric_goal", "applies only with a metric (a training template's own)");
    return;
  }
  if (const toml::node* node = s.get("metric"); node && node->is_array()) {
    if (s.has("metric_goal")) s.report("metric_goal", "applies only with a single metric (a training template's own)");
    return read_objectives(s, *node->as_array(), spec);
  }
  std::string name;
  s.read_string("metric", name);
  if (name.empty()) return;  // already reported
  const auto& quantities = task_quantities(spec.task);
  std::vector<std::string> task_names;
  for (const auto& q : quantities) task_names.push_back("val_" + q);
  auto builtin = parse_metric(name);
  if (builtin && std::find(quantities.begin(), quantities.end(), builtin->quantity()) != quantities.end()) {
    spec.metric = *builtin;
    if (!goal.empty() && goal != goal_of(*builtin)) {
      s.report("metric_goal", fmt::format("\"{}\" contradicts {}, which is to {}", goal, name, goal_of(*builtin)));
    }
    return;
  }
  if (builtin) {
    return s.report("metric", fmt::format("\"{}\" is not computed for task {} (its metrics: {})", name,
                                          datasets::to_string(spec.task), fmt::join(task_names, ", ")));
  }
  const bool well_formed =
      name.size() > 4 && name.rfind("val_", 0) == 0 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      });
  if (!well_formed || goal.empty()) {
    return s.report("metric", fmt::format("must be {} (task {}), or val_<name> of a training template's own metric "
                                          "with metric_goal = \"maximize\" or \"minimize\"; got \"{}\"",
                                          quoted_alternatives(task_names), datasets::to_string(spec.task), name));
  }
  spec.metric = Metric(name.substr(4), parse_goal(goal) == Goal::maximize);
}

}  // namespace

void parse_experiment(Section s, ExperimentSpec& spec, const SearchChecks& checks, const PathBase& base) {
  std::vector<std::string> known = {"name", "epochs",      "seed",       "search",          "metric",
                                    "task", "metric_goal", "warm_start", "from_checkpoint", "beam"};
  for (const auto& key : search_specific_keys()) known.push_back(key);
  s.check_unknown(known);
  s.read_string("name", spec.name);
  if (s.has("name") && spec.name.find_first_of("/\\") != std::string::npos) {
    s.report("name", fmt::format("must not contain '/' or '\\' (it names the run directory), got \"{}\"", spec.name));
  }
  s.read_int("epochs", spec.epochs, 1, INT_MAX);
  s.read_int("seed", spec.seed, 0, INT64_MAX);
  s.read_kind("search", spec.search, search_names(), parse_search_kind);
  s.read_int("samples", spec.samples, 1, INT_MAX);
  s.read_kind("task", spec.task, datasets::task_kind_names(), datasets::parse_task_kind);
  read_metric(s, spec);
  s.read_int("beam", spec.beam, 1, 16);
  if (s.has("beam") && spec.task != datasets::TaskKind::captioning)
    s.report("beam", fmt::format("decodes captions: it needs task = \"captioning\" (the task is {})",
                                 datasets::to_string(spec.task)));
  s.read_int("max_epochs", spec.max_epochs, 1, INT_MAX);
  s.read_int("min_epochs", spec.min_epochs, 1, INT_MAX);
  s.read_int("eta", spec.eta, 2, INT_MAX);
  s.read_int("brackets", spec.brackets, 1, INT_MAX);
  s.read_int("population", spec.population, 2, kMaxConfigs);
  s.read_int("ready", spec.ready, 1, INT_MAX);
  s.read_number("exploit_fraction", spec.exploit_fraction, "a number in (0, 0.5]",
                [](double x) { return x > 0 && x <= 0.5; });
  s.read_positive_numbers("perturb", spec.perturb);
  s.read_names("perturb_keys", spec.perturb_keys);
  // tpe
  s.read_int("startup", spec.startup, 1, INT_MAX);
  s.read_int("candidates", spec.candidates, 1, INT_MAX);
  s.read_number("gamma", spec.gamma, "a number in (0, 1]", [](double x) { return x > 0 && x <= 1; });
  s.read_number("prior_weight", spec.prior_weight, "a number > 0", [](double x) { return x > 0; });
  s.read_int("in_flight", spec.in_flight, 1, INT_MAX);
  s.read_kind("pruner", spec.pruner, pruner_names(), parse_pruner);
  // warm start: run directories, relative to the spec
  s.read_names("warm_start", spec.warm_start, "a non-empty list of run directories");
  spec.warm_start_as_written = spec.warm_start;
  for (auto& dir : spec.warm_start) dir = resolve_path(base.dir, dir);
  if (const toml::node* node = s.get("from_checkpoint")) {
    if (!node->is_boolean())
      s.report("from_checkpoint", fmt::format("must be true or false, got {}", describe_node(*node)));
    else
      spec.from_checkpoint = node->as_boolean()->get();
  }
  if (spec.from_checkpoint && spec.warm_start.empty())
    s.report("from_checkpoint", "needs warm_start: the earlier runs whose checkpoints to start from");

  // With an invalid search (already reported) the search's rules would only add noise.
  const toml::node* search_node = s.get("search");
  if (search_node && (!search_node->is_string() || search_node->as_string()->get() != to_string(spec.search))) {
    return;
  }
  if (checks.experiment) checks.experiment(s, spec);
}

void parse_space(const toml::table* table, ExperimentSpec& spec, Problems& problems, const PathBase& base,
                 bool allow_distributions) {
  spec.space = json::object();
  const std::string empty =
      "the search space is empty: give at least one hyper-parameter in [space], "
      "e.g. model = [\"mlp\"]";
  if (!table) return problems.add(empty);
  if (table->empty()) return problems.add(table->source(), empty);
  for (const auto& [k, node] : *table) {
    const std::string key(k.str());
    if (auto bad = find_non_finite(node)) {
      problems.add(bad->source(), fmt::format("[space] {} must hold finite numbers, got {}", key, describe_node(*bad)));
      continue;
    }
    auto entry = to_json(node);
    if (!entry) {
      problems.add(node.source(), fmt::format("[space] {}: dates and times are not supported", key));
      continue;
    }
    if (auto st = check_space_entry(key, *entry, allow_distributions); !st) {
      problems.add(node.source(), st.message());
      continue;
    }
    if (!entry->is_array() && !entry->is_object()) entry = json::array({*entry});
    if (is_distribution(*entry) && distribution_of(*entry) != Distribution::int_uniform && entry->contains("low")) {
      (*entry)["low"] = entry->at("low").get<double>();  // uniform bounds are floats
      (*entry)["high"] = entry->at("high").get<double>();
    }
    // A TOML key: the "model" hyper-parameter may name TorchScript files relative to the spec.
    if (key == "model") resolve_model_paths(*entry, base);
    spec.space[key] = std::move(*entry);
  }
}

}  // namespace cerebro::spec_detail
