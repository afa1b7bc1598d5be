// The spec as a whole: the TOML document, its sections in order (each read by
// its own file, runtime/spec/spec_section.hpp), and the spec as JSON.
#include "runtime/spec/spec.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "datasets/dataset_source.hpp"
#include "datasets/normalization.hpp"
#include "runtime/base/file_io.hpp"
#include "runtime/spec/param_value.hpp"
#include "runtime/spec/search_registry.hpp"
#include "runtime/spec/spec_section.hpp"

namespace cerebro {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace spec_detail;

namespace {

std::string default_name(const std::string& origin) {
  fs::path p(origin);
  return p.extension() == ".toml" && !p.stem().empty() ? p.stem().string() : "experiment";
}

}  // namespace

Result<ExperimentSpec> parse_spec_string_with(const std::string& toml_text, const std::string& spec_dir,
                                              const std::string& origin, const SearchChecks& checks,
                                              const std::vector<std::string>& search_dirs, const json& datasets) {
  Problems problems(origin);
  toml::table root;
  try {
    root = toml::parse(std::string_view(toml_text), std::string_view(origin));
  } catch (const toml::parse_error& e) {
    problems.add(e.source(), fmt::format("TOML syntax error: {}", e.description()));
    return problems.status();
  }
  ExperimentSpec spec;
  spec.source_text = toml_text;
  std::error_code ec;
  const std::string cwd = fs::current_path(ec).string();  // "" if the directory is gone
  spec.spec_dir = spec_dir.empty() ? "" : resolve_path(cwd, spec_dir);
  spec.search_dirs = search_dirs;
  const PathBase base{spec_dir.empty() ? cwd : spec.spec_dir, search_dirs};

  const std::vector<std::string> sections = {"experiment", "data", "cluster", "space"};
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    const bool known = std::find(sections.begin(), sections.end(), key) != sections.end();
    if (known && !node.is_table()) {
      problems.add(k.source(), fmt::format("'{}' must be a section [{}], got {}", key, key, describe_node(node)));
    } else if (!known && node.is_table()) {
      problems.add(node.source(), fmt::format("unknown section [{}] ({})", key, suggest_name(key, sections, "[", "]")));
    } else if (!known) {
      problems.add(k.source(), fmt::format("unknown key '{}' at the top level: keys belong in a section "
                                           "([experiment], [data], [cluster] or [space])",
                                           key));
    }
  }
  auto table_of = [&](const char* name) { return root.get_as<toml::table>(name); };
  parse_experiment(Section(table_of("experiment"), "experiment", problems), spec, checks, base);
  if (!root.contains("data")) {
    problems.add("the [data] section is missing: give at least source = \"idx\" or \"csv\"");
  } else if (table_of("data")) {  // a non-table [data] is already reported
    spec.datasets = take_dataset(*table_of("data"), datasets, problems);
    parse_data(Section(table_of("data"), "data", problems), spec.data, base);
  }
  check_task_labels(Section(table_of("data"), "data", problems), spec);
  parse_cluster(Section(table_of("cluster"), "cluster", problems), spec.cluster);
  if (!root.contains("space") || table_of("space")) {
    const size_t before = problems.size();
    const bool allow_distributions = checks.samples_space ? checks.samples_space(spec.search) : true;
    parse_space(table_of("space"), spec, problems, base, allow_distributions);
    // Only on a clean [space]: a broken one has been reported already.
    if (problems.size() == before && checks.space) {
      Section experiment(table_of("experiment"), "experiment", problems);
      checks.space(experiment, spec);
    }
  }
  if (spec.name.empty()) spec.name = default_name(origin);

  if (!problems.empty()) return problems.status();
  return spec;
}

Result<ExperimentSpec> parse_spec_file_with(const std::string& path, const SearchChecks& checks) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::not_found(path + ": spec file not found");
  if (fs::is_directory(path, ec)) return Status::invalid_argument(path + ": is a directory, not a spec file");
  auto text = read_whole_file(path);
  if (!text.ok()) return text.status().with_context("cannot read the spec file");
  const std::string dir = fs::absolute(fs::path(path)).parent_path().string();
  return parse_spec_string_with(*text, dir, path, checks);
}

Result<ExperimentSpec> parse_spec_file(const std::string& path) { return parse_spec_file_with(path, search_checks()); }

Result<ExperimentSpec> parse_spec_string(const std::string& toml_text, const std::string& spec_dir,
                                         const std::string& origin, const std::vector<std::string>& search_dirs,
                                         const json& datasets) {
  return parse_spec_string_with(toml_text, spec_dir, origin, search_checks(), search_dirs, datasets);
}

json spec_to_json(const ExperimentSpec& spec) {
  const DataSpec& d = spec.data;
  const ClusterSpec& c = spec.cluster;
  std::vector<std::string> augments;
  for (Augment a : d.augment) augments.push_back(to_string(a));
  // An unset normalization is written as the spec spells it: "auto".
  const std::string normalization =
      d.normalization ? datasets::to_string(*d.normalization) : normalization_names().front();
  return json{{"name", spec.name},
              {"epochs", spec.epochs},
              {"seed", spec.seed},
              {"search", to_string(spec.search)},
              {"samples", spec.samples},
              {"metric", to_string(spec.metric)},
              {"metric_goal", goal_of(spec.metric)},
              {"task", datasets::to_string(spec.task)},
              {"beam", spec.beam},
              {"spec_dir", spec.spec_dir},
              {"max_epochs", spec.max_epochs},
              {"min_epochs", spec.min_epochs},
              {"eta", spec.eta},
              {"brackets", spec.brackets},
              {"population", spec.population},
              {"ready", spec.ready},
              {"exploit_fraction", spec.exploit_fraction},
              {"perturb", spec.perturb},
              {"perturb_keys", spec.perturb_keys},
              {"startup", spec.startup},
              {"candidates", spec.candidates},
              {"gamma", spec.gamma},
              {"prior_weight", spec.prior_weight},
              {"in_flight", spec.in_flight},
              {"pruner", to_string(spec.pruner)},
              {"warm_start", spec.warm_start},
              {"from_checkpoint", spec.from_checkpoint},
              {"objectives",
               [&] {
                 json names = json::array();
                 for (const auto& o : spec.objectives) names.push_back(o.name);
                 return names;
               }()},
              {"datasets", spec.datasets},
              {"data",
               {{"source", d.source},
                {"dataset", d.dataset},
                {"path", d.path},
                {"train_images", d.train_images},
                {"train_labels", d.train_labels},
                {"test_images", d.test_images},
                {"test_labels", d.test_labels},
                {"train", d.train},
                {"test", d.test},
                {"label_column", d.label_column},
                {"label_columns", d.label_columns},
                {"validation_fraction", d.validation_fraction},
                {"test_fraction", d.test_fraction},
                {"partitions", d.partitions},
                {"limit", d.limit},
                {"normalization", normalization},
                {"image_size", d.image_size},
                {"color", to_string(d.color)},
                {"resize", d.resize},
                {"skip_bad", d.skip_bad},
                {"augment", augments},
                {"crop_padding", d.crop_padding},
                {"cache", d.cache},
                {"read_ahead", d.read_ahead}}},
              {"cluster",
               {{"workers", c.workers},
                {"threads_per_worker", c.threads_per_worker},
                {"max_unit_retries", c.max_unit_retries},
                {"scheduler", to_string(c.scheduler)},
                {"replication", c.replication},
                {"heartbeat_timeout", c.heartbeat_timeout},
                {"memory_mb", c.memory_mb},
                {"model_memory_mb", c.model_memory_mb},
                {"parallelism", to_string(c.parallelism)},
                {"max_gang", c.max_gang}}},
              {"space", spec.space}};
}

datasets::NormalizationMode effective_normalization(const DataSpec& data) {
  if (data.normalization) return *data.normalization;
  // IDX, image folders and COCO hold images (one statistic for all
  // pixels); csv and registered sources hold features of different scales;
  // text holds tokens, no features.
  const auto builtin = datasets::parse_builtin_source(data.source);
  if (builtin == datasets::BuiltinSource::text) return datasets::NormalizationMode::none;  // tokens, no features
  const bool images = builtin == datasets::BuiltinSource::idx || builtin == datasets::BuiltinSource::images ||
                      builtin == datasets::BuiltinSource::coco;
  return images ? datasets::NormalizationMode::global : datasets::NormalizationMode::per_feature;
}

std::vector<std::string> data_source_names() {
  auto names = datasets::builtin_dataset_sources();
  for (auto& name : datasets::registered_dataset_sources()) names.push_back(std::move(name));
  return names;
}
const std::vector<std::string>& normalization_names() {
  static const std::vector<std::string> names = {"auto", "none", "global", "per_feature"};
  return names;
}
const std::vector<std::string>& search_specific_keys() {
  static const std::vector<std::string> keys = {"samples", "max_epochs", "eta", "min_epochs", "brackets", "population",
                                                "ready", "exploit_fraction", "perturb", "perturb_keys",
                                                // tpe
                                                "startup", "candidates", "gamma", "prior_weight", "in_flight",
                                                "pruner"};
  return keys;
}

bool metric_higher_is_better(const std::string& metric) { return metric_from_record(metric).higher_is_better(); }

}  // namespace cerebro
