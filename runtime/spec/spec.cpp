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

namespace cerebro {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Collects every problem with its position, so one run of the parser can
// report all of them, in file order.
class Problems {
 public:
  explicit Problems(std::string origin) : origin_(origin.empty() ? "<spec>" : std::move(origin)) {}
  void add(const toml::source_region& where, std::string text) {
    list_.push_back({where.begin.line, where.begin.column, std::move(text)});
  }
  void add(std::string text) { list_.push_back({0, 0, std::move(text)}); }  // no position
  bool empty() const { return list_.empty(); }
  size_t size() const { return list_.size(); }
  Status status() const {
    auto sorted = list_;
    std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
      // Problems without a position (missing keys) go last.
      auto key = [](const Entry& e) { return std::make_pair(e.line == 0 ? UINT_MAX : e.line, e.column); };
      return key(a) < key(b);
    });
    std::string out;
    for (const auto& e : sorted) {
      if (!out.empty()) out += '\n';
      out += e.line == 0 ? fmt::format("{}: {}", origin_, e.text)
                         : fmt::format("{}:{}:{}: {}", origin_, e.line, e.column, e.text);
    }
    return Status::invalid_argument(out);
  }

 private:
  struct Entry { uint32_t line, column; std::string text; };
  std::string origin_;
  std::vector<Entry> list_;
};

// A TOML value as JSON; nullopt for dates and times, which no key accepts.
std::optional<json> to_json(const toml::node& node) {
  if (auto v = node.as_integer()) return json(v->get());
  if (auto v = node.as_floating_point()) return json(v->get());
  if (auto v = node.as_string()) return json(v->get());
  if (auto v = node.as_boolean()) return json(v->get());
  if (auto arr = node.as_array()) {
    json out = json::array();
    for (const auto& item : *arr) {
      auto j = to_json(item);
      if (!j) return std::nullopt;
      out.push_back(std::move(*j));
    }
    return out;
  }
  if (auto tbl = node.as_table()) {
    json out = json::object();
    for (const auto& [k, v] : *tbl) {
      auto j = to_json(v);
      if (!j) return std::nullopt;
      out[std::string(k.str())] = std::move(*j);
    }
    return out;
  }
  return std::nullopt;
}

// "string \"3\"", "float 3.0": what the user wrote, for "got ..." messages.
std::string describe_node(const toml::node& node) {
  if (auto v = node.as_floating_point(); v && !std::isfinite(v->get())) {
    return std::string("float ") + (std::isnan(v->get()) ? "nan" : v->get() > 0 ? "inf" : "-inf");
  }
  auto j = to_json(node);
  if (!j) return "a date/time value";
  return json_type_name(*j) + " " + j->dump();
}

// Some float inside a value that is not finite (TOML allows inf and nan).
const toml::node* find_non_finite(const toml::node& node) {
  if (auto v = node.as_floating_point()) return std::isfinite(v->get()) ? nullptr : &node;
  if (auto arr = node.as_array()) {
    for (const auto& item : *arr) if (auto bad = find_non_finite(item)) return bad;
  }
  if (auto tbl = node.as_table()) {
    for (const auto& [k, v] : *tbl) if (auto bad = find_non_finite(v)) return bad;
  }
  return nullptr;
}

// One section's table. Each read_* marks its key as known, type-checks it and
// leaves `out` unchanged when the key is absent or wrong.
class Section : public ExperimentKeys {
 public:
  Section(const toml::table* table, std::string name, Problems& problems)
      : table_(table), name_(std::move(name)), problems_(problems) {}

  const toml::node* get(const std::string& key) const { return table_ ? table_->get(key) : nullptr; }
  bool has(const std::string& key) const override { return get(key) != nullptr; }
  const toml::source_region* where() const { return table_ ? &table_->source() : nullptr; }

  void report(const std::string& key, const std::string& text) override {
    const toml::node* node = get(key);
    std::string message = fmt::format("[{}] {} {}", name_, key, text);
    if (node) problems_.add(node->source(), message);
    else if (where()) problems_.add(*where(), message);
    else problems_.add(message);
  }
  void missing(const std::string& key, const std::string& hint) override {
    std::string message = fmt::format("[{}] {} is required: {}", name_, key, hint);
    if (where()) problems_.add(*where(), message); else problems_.add(message);
  }

  void read_string(const std::string& key, std::string& out,
                   const std::vector<std::string>& allowed = {}) {
    const toml::node* node = get(key);
    if (!node) return;
    if (!node->is_string()) return wrong(key, "a string", *node);
    std::string value = node->as_string()->get();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      return report(key, fmt::format("must be {}, got \"{}\"", quoted_alternatives(allowed), value));
    }
    if (value.empty()) return report(key, "must not be empty");
    out = value;
  }

  // A string naming one of an enum's values: `names` are the accepted
  // spellings, `parse` turns the accepted one into the enum.
  template <class Kind, class Parse>
  void read_kind(const std::string& key, Kind& out, const std::vector<std::string>& names, Parse parse) {
    std::string name;
    read_string(key, name, names);
    if (auto kind = parse(name)) out = *kind;
  }

  template <class Int>
  void read_int(const std::string& key, Int& out, int64_t min, int64_t max) {
    const toml::node* node = get(key);
    if (!node) return;
    const std::string expected = fmt::format("an integer >= {}", min);
    if (!node->is_integer()) return wrong(key, expected, *node);
    const int64_t value = node->as_integer()->get();
    if (value < min) return wrong(key, expected, *node);
    if (value > max) return wrong(key, fmt::format("an integer <= {}", max), *node);
    out = static_cast<Int>(value);
  }

  // A fraction in [0, 1) or (0, 1); integers are accepted for float keys.
  void read_fraction(const std::string& key, double& out, bool zero_allowed) {
    const toml::node* node = get(key);
    if (!node) return;
    const std::string expected = zero_allowed ? "a number in [0, 1)" : "a number in (0, 1)";
    if (!node->is_number()) return wrong(key, expected, *node);
    const double value = node->is_integer() ? static_cast<double>(node->as_integer()->get())
                                            : node->as_floating_point()->get();
    if (!(value >= 0 && value < 1) || (!zero_allowed && value == 0)) {
      return wrong(key, expected, *node);
    }
    out = value;
  }

  // A number (integers accepted) for which `valid` holds; `expected` says
  // which, e.g. "a number in (0, 0.5]".
  template <class Valid>
  void read_number(const std::string& key, double& out, const std::string& expected, Valid valid) {
    const toml::node* node = get(key);
    if (!node) return;
    if (!node->is_number()) return wrong(key, expected, *node);
    const double value = number_of(*node);
    if (!std::isfinite(value) || !valid(value)) return wrong(key, expected, *node);
    out = value;
  }

  // A non-empty list of numbers > 0 (integers accepted).
  void read_positive_numbers(const std::string& key, std::vector<double>& out) {
    const toml::node* node = get(key);
    if (!node) return;
    const std::string expected = "a non-empty list of numbers > 0";
    const toml::array* list = node->as_array();
    if (!list || list->empty()) return wrong(key, expected, *node);
    std::vector<double> values;
    for (const auto& item : *list) {
      const double value = item.is_number() ? number_of(item) : -1;
      if (!std::isfinite(value) || !(value > 0)) return wrong(key, expected, *node);
      values.push_back(value);
    }
    out = std::move(values);
  }

  // A non-empty list of distinct, non-empty strings.
  void read_names(const std::string& key, std::vector<std::string>& out,
                  const std::string& expected = "a non-empty list of hyper-parameter names") {
    const toml::node* node = get(key);
    if (!node) return;
    const toml::array* list = node->as_array();
    if (!list || list->empty()) return wrong(key, expected, *node);
    std::vector<std::string> names;
    for (const auto& item : *list) {
      if (!item.is_string() || item.as_string()->get().empty()) return wrong(key, expected, *node);
      names.push_back(item.as_string()->get());
    }
    out = std::move(names);
  }

  void read_bool(const std::string& key, bool& out) {
    const toml::node* node = get(key);
    if (!node) return;
    if (!node->is_boolean()) return wrong(key, "true or false", *node);
    out = node->as_boolean()->get();
  }

  // A list of distinct strings, each one of `allowed` (may be empty).
  void read_choices(const std::string& key, std::vector<std::string>& out, const std::vector<std::string>& allowed) {
    const toml::node* node = get(key);
    if (!node) return;
    const std::string expected = fmt::format("a list of {}", quoted_alternatives(allowed));
    const toml::array* list = node->as_array();
    if (!list) return wrong(key, expected, *node);
    std::vector<std::string> values;
    for (const auto& item : *list) {
      if (!item.is_string()) return wrong(key, expected, *node);
      const std::string value = item.as_string()->get();
      if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
        return report(key, fmt::format("holds \"{}\": each entry must be {}", value, quoted_alternatives(allowed)));
      if (std::find(values.begin(), values.end(), value) != values.end())
        return report(key, fmt::format("lists \"{}\" twice", value));
      values.push_back(value);
    }
    out = std::move(values);
  }

  // An image size: one integer (square) or [height, width], each in [1, 65536].
  void read_image_size(const std::string& key, std::vector<int64_t>& out) {
    const toml::node* node = get(key);
    if (!node) return;
    const std::string expected = "an integer or [height, width], each in [1, 65536]";
    auto in_range = [](const toml::node& n) {
      return n.is_integer() && n.as_integer()->get() >= 1 && n.as_integer()->get() <= 65536;
    };
    if (in_range(*node)) {
      out = {node->as_integer()->get(), node->as_integer()->get()};
      return;
    }
    const toml::array* list = node->as_array();
    if (!list || list->size() != 2 || !in_range(*list->get(0)) || !in_range(*list->get(1))) return wrong(key, expected, *node);
    out = {list->get(0)->as_integer()->get(), list->get(1)->as_integer()->get()};
  }

  // A complete message (already naming the key) at the key's position, or at
  // the section when the key is absent.
  void report_message(const std::string& key, const std::string& message) override {
    const toml::node* node = get(key);
    if (node) problems_.add(node->source(), message);
    else if (where()) problems_.add(*where(), message);
    else problems_.add(message);
  }

  // Reports keys not in `known`, at the key's own position.
  void check_unknown(const std::vector<std::string>& known) {
    if (!table_) return;
    for (const auto& [k, v] : *table_) {
      const std::string key(k.str());
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      problems_.add(k.source(), fmt::format("unknown key '{}' in [{}] ({})", key, name_,
                                            suggest_name(key, known)));
    }
  }

 private:
  static double number_of(const toml::node& node) {
    return node.is_integer() ? static_cast<double>(node.as_integer()->get()) : node.as_floating_point()->get();
  }

  void wrong(const std::string& key, const std::string& expected, const toml::node& node) {
    problems_.add(node.source(), fmt::format("[{}] {} must be {}, got {}", name_, key, expected,
                                             describe_node(node)));
  }

  const toml::table* table_;
  std::string name_;
  Problems& problems_;
};

// An absolute, lexically normal path; relative paths are taken from `base`.
std::string resolve_path(const std::string& base, const std::string& path) {
  if (path.empty()) return path;
  fs::path p(path);
  if (p.is_relative()) p = fs::path(base) / p;
  p = p.lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p.string();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// TorchScript models are named by a path ending in ".pt", relative to the spec.
void resolve_model_paths(json& entry, const std::string& base) {
  if (entry.is_string() && ends_with(entry.get<std::string>(), ".pt")) {
    entry = resolve_path(base, entry.get<std::string>());
  } else if (entry.is_array()) {
    for (auto& item : entry) if (item.is_string()) resolve_model_paths(item, base);
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
  auto task = std::find_if(spec.objectives.begin(), spec.objectives.end(), [](const Objective& o) { return o.metric.has_value(); });
  if (ok && task == spec.objectives.end()) {
    std::vector<std::string> task_names;
    for (const auto& q : quantities) task_names.push_back("val_" + q);
    s.report("metric", fmt::format("needs a task metric among its objectives ({}) to rank configs by",
                                   quoted_alternatives(task_names)));
  }
  if (!ok || task == spec.objectives.end()) spec.objectives.clear();
  else spec.metric = *task->metric;
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
  const bool well_formed = name.size() > 4 && name.rfind("val_", 0) == 0 &&
                           std::all_of(name.begin(), name.end(), [](char c) {
                             return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
                           });
  if (!well_formed || goal.empty()) {
    return s.report("metric", fmt::format("must be {} (task {}), or val_<name> of a training template's own metric "
                                          "with metric_goal = \"maximize\" or \"minimize\"; got \"{}\"",
                                          quoted_alternatives(task_names), datasets::to_string(spec.task), name));
  }
  spec.metric = Metric(name.substr(4), goal == "maximize");
}

void parse_experiment(Section s, ExperimentSpec& spec, const SearchChecks& checks, const std::string& base) {
  std::vector<std::string> known = {"name",     "epochs", "seed",        "search",    "metric",
                                    "task",     "metric_goal", "warm_start", "from_checkpoint"};
  for (const auto& key : search_specific_keys()) known.push_back(key);
  s.check_unknown(known);
  s.read_string("name", spec.name);
  if (s.has("name") && spec.name.find_first_of("/\\") != std::string::npos) {
    s.report("name", fmt::format("must not contain '/' or '\\' (it names the run directory), got \"{}\"",
                                 spec.name));
  }
  s.read_int("epochs", spec.epochs, 1, INT_MAX);
  s.read_int("seed", spec.seed, 0, INT64_MAX);
  s.read_kind("search", spec.search, search_names(), parse_search_kind);
  s.read_int("samples", spec.samples, 1, INT_MAX);
  s.read_kind("task", spec.task, datasets::task_kind_names(), datasets::parse_task_kind);
  read_metric(s, spec);
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
  s.read_string("pruner", spec.pruner, {"asha", "hyperband"});
  // warm start: run directories, relative to the spec
  s.read_names("warm_start", spec.warm_start, "a non-empty list of run directories");
  spec.warm_start_as_written = spec.warm_start;
  for (auto& dir : spec.warm_start) dir = resolve_path(base, dir);
  if (const toml::node* node = s.get("from_checkpoint")) {
    if (!node->is_boolean()) s.report("from_checkpoint", fmt::format("must be true or false, got {}", describe_node(*node)));
    else spec.from_checkpoint = node->as_boolean()->get();
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

// Which built-in sources a [data] key applies to (keys every source takes are not listed).
const std::vector<std::pair<std::string, std::vector<datasets::BuiltinSource>>>& source_specific_keys() {
  using datasets::BuiltinSource;
  static const std::vector<std::pair<std::string, std::vector<BuiltinSource>>> keys = {
      {"path", {BuiltinSource::idx, BuiltinSource::images}},
      {"train_images", {BuiltinSource::idx}},
      {"train_labels", {BuiltinSource::idx}},
      {"test_images", {BuiltinSource::idx}},
      {"test_labels", {BuiltinSource::idx}},
      {"train", {BuiltinSource::csv}},
      {"test", {BuiltinSource::csv}},
      {"label_column", {BuiltinSource::csv}},
      {"image_size", {BuiltinSource::images}},
      {"color", {BuiltinSource::images}},
      {"resize", {BuiltinSource::images}},
      {"skip_bad", {BuiltinSource::images}},
      {"augment", {BuiltinSource::idx, BuiltinSource::images}},
      {"crop_padding", {BuiltinSource::idx, BuiltinSource::images}},
  };
  return keys;
}

void parse_data(Section s, DataSpec& data, const std::string& base) {
  std::vector<std::string> known = {"source", "validation_fraction", "test_fraction", "partitions", "limit",
                                    "normalization", "cache"};
  for (const auto& [key, sources] : source_specific_keys()) known.push_back(key);
  s.check_unknown(known);

  s.read_string("source", data.source, data_source_names());
  const std::vector<std::pair<const char*, std::string*>> path_keys = {
      {"path", &data.path},         {"train_images", &data.train_images},
      {"train_labels", &data.train_labels}, {"test_images", &data.test_images},
      {"test_labels", &data.test_labels},   {"train", &data.train}, {"test", &data.test}};
  for (auto [key, field] : path_keys) {
    s.read_string(key, *field);
    *field = resolve_path(base, *field);
  }
  if (const toml::node* column = s.get("label_column"); column && column->is_array()) {
    s.read_names("label_column", data.label_columns, "a column name or a non-empty list of column names");
    if (!data.label_columns.empty()) data.label_column = data.label_columns.front();
  } else {
    s.read_string("label_column", data.label_column);
    if (!data.label_column.empty()) data.label_columns = {data.label_column};
  }
  s.read_fraction("validation_fraction", data.validation_fraction, /*zero_allowed=*/true);
  s.read_fraction("test_fraction", data.test_fraction, /*zero_allowed=*/false);
  s.read_int("partitions", data.partitions, 0, INT_MAX);
  s.read_int("limit", data.limit, 0, INT64_MAX);
  s.read_string("normalization", data.normalization, normalization_names());
  s.read_image_size("image_size", data.image_size);
  s.read_string("color", data.color, {"grayscale", "rgb"});
  s.read_bool("resize", data.resize);
  s.read_bool("skip_bad", data.skip_bad);
  s.read_choices("augment", data.augment, {"random_crop", "hflip"});
  s.read_int("crop_padding", data.crop_padding, 1, 1024);
  s.read_bool("cache", data.cache);

  if (!s.has("source")) {
    return s.missing("source", "give source = \"idx\" (MNIST-layout files), \"csv\" or \"images\"");
  }
  if (data.source.empty()) return;  // an invalid source, already reported
  const auto builtin = datasets::parse_builtin_source(data.source);
  for (const auto& [key, sources] : source_specific_keys()) {
    if (!s.has(key)) continue;
    if (key == "test_fraction") continue;
    if (builtin && std::find(sources.begin(), sources.end(), *builtin) != sources.end()) continue;
    std::vector<std::string> names;
    for (auto source : sources) names.push_back(datasets::to_string(source));
    s.report(key, fmt::format("applies only to source = {}", quoted_alternatives(names)));
  }
  if (s.has("crop_padding") && std::find(data.augment.begin(), data.augment.end(), "random_crop") == data.augment.end())
    s.report("crop_padding", "applies only with augment = [\"random_crop\", ...]");
  if (!builtin) return;  // a source registered by C++ code: the loader supplies the examples
  if (*builtin == datasets::BuiltinSource::idx) {
    const bool any_file = s.has("train_images") || s.has("train_labels") || s.has("test_images") ||
                          s.has("test_labels");
    if (s.has("path") && any_file) {
      s.report("path", "and the explicit files (train_images ...) exclude each other: give one");
    } else if (!s.has("path") && !any_file) {
      s.missing("path", "give path = the directory with the IDX files, or all four of "
                        "train_images, train_labels, test_images and test_labels");
    } else if (!s.has("path")) {
      for (const auto& key : {"train_images", "train_labels", "test_images", "test_labels"}) {
        if (!s.has(key)) s.missing(key, "give all four IDX files, or path = the directory holding them");
      }
    }
    if (s.has("test_fraction")) s.report("test_fraction", "applies only to source = \"csv\", \"images\" or a registered source");
  } else if (*builtin == datasets::BuiltinSource::csv) {
    if (!s.has("train")) s.missing("train", "give train = the CSV file to train on");
    if (!s.has("label_column")) s.missing("label_column", "give the name of the CSV column holding the label");
    if (s.has("test") && s.has("test_fraction")) {
      s.report("test_fraction", "applies only when no test file is given (the test set is split from train)");
    }
  } else if (!s.has("path")) {
    s.missing("path", "give path = a folder with train/<class>/ image folders, or a CSV manifest with path,label columns");
  }
}

void parse_cluster(Section s, ClusterSpec& cluster) {
  s.check_unknown({"workers", "threads_per_worker", "max_unit_retries", "scheduler", "replication",
                   "heartbeat_timeout", "memory_mb", "parallelism", "max_gang"});
  s.read_int("workers", cluster.workers, 0, INT_MAX);
  s.read_int("threads_per_worker", cluster.threads_per_worker, 1, INT_MAX);
  s.read_int("max_unit_retries", cluster.max_unit_retries, 0, INT_MAX);
  s.read_int("replication", cluster.replication, 0, 1024);
  s.read_number("heartbeat_timeout", cluster.heartbeat_timeout, "a number of seconds in [1, 3600]",
                [](double v) { return v >= 1 && v <= 3600; });
  s.read_kind("scheduler", cluster.scheduler, scheduler_names(), parse_scheduler_kind);
  s.read_int("memory_mb", cluster.memory_mb, 0, int64_t{1} << 40);
  // Issue 14 (gangs).
  s.read_kind("parallelism", cluster.parallelism, parallelism_names(), parse_parallelism);
  s.read_int("max_gang", cluster.max_gang, 0, 1 << 20);
  if (cluster.max_gang == 1) s.report("max_gang", "must be 0 (as many as hold partitions) or >= 2, got 1");
}

void parse_space(const toml::table* table, ExperimentSpec& spec, Problems& problems,
                 const std::string& base, bool allow_distributions) {
  spec.space = json::object();
  const std::string empty = "the search space is empty: give at least one hyper-parameter in [space], "
                            "e.g. model = [\"mlp\"]";
  if (!table) return problems.add(empty);
  if (table->empty()) return problems.add(table->source(), empty);
  for (const auto& [k, node] : *table) {
    const std::string key(k.str());
    if (auto bad = find_non_finite(node)) {
      problems.add(bad->source(), fmt::format("[space] {} must hold finite numbers, got {}", key,
                                              describe_node(*bad)));
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

// The label columns the task reads: several only for regression.
void check_task_labels(Section s, const ExperimentSpec& spec) {
  if (spec.data.label_columns.size() > 1 && spec.task != datasets::TaskKind::regression) {
    s.report("label_column", fmt::format("lists {} columns: several target columns are for task = \"regression\"; "
                                         "task {} reads one", spec.data.label_columns.size(), datasets::to_string(spec.task)));
  }
  const auto builtin = datasets::parse_builtin_source(spec.data.source);
  if (spec.task != datasets::TaskKind::classification &&
      (builtin == datasets::BuiltinSource::idx || builtin == datasets::BuiltinSource::images)) {
    s.report("source", fmt::format("{} holds class labels; task {} needs source = \"csv\" (or a registered source)",
                                   spec.data.source, datasets::to_string(spec.task)));
  }
}

std::string default_name(const std::string& origin) {
  fs::path p(origin);
  return p.extension() == ".toml" && !p.stem().empty() ? p.stem().string() : "experiment";
}

}  // namespace

Result<ExperimentSpec> parse_spec_string_with(const std::string& toml_text, const std::string& spec_dir,
                                              const std::string& origin, const SearchChecks& checks) {
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
  const std::string base = spec_dir.empty() ? cwd : spec.spec_dir;

  const std::vector<std::string> sections = {"experiment", "data", "cluster", "space"};
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    const bool known = std::find(sections.begin(), sections.end(), key) != sections.end();
    if (known && !node.is_table()) {
      problems.add(k.source(), fmt::format("'{}' must be a section [{}], got {}", key, key,
                                           describe_node(node)));
    } else if (!known && node.is_table()) {
      problems.add(node.source(), fmt::format("unknown section [{}] ({})", key,
                                              suggest_name(key, sections, "[", "]")));
    } else if (!known) {
      problems.add(k.source(), fmt::format("unknown key '{}' at the top level: keys belong in a section "
                                           "([experiment], [data], [cluster] or [space])", key));
    }
  }
  auto table_of = [&](const char* name) { return root.get_as<toml::table>(name); };
  parse_experiment(Section(table_of("experiment"), "experiment", problems), spec, checks, base);
  if (!root.contains("data")) {
    problems.add("the [data] section is missing: give at least source = \"idx\" or \"csv\"");
  } else if (table_of("data")) {  // a non-table [data] is already reported
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

json spec_to_json(const ExperimentSpec& spec) {
  const DataSpec& d = spec.data;
  const ClusterSpec& c = spec.cluster;
  return json{
      {"name", spec.name}, {"epochs", spec.epochs}, {"seed", spec.seed}, {"search", to_string(spec.search)},
      {"samples", spec.samples}, {"metric", to_string(spec.metric)}, {"metric_goal", goal_of(spec.metric)},
      {"task", datasets::to_string(spec.task)}, {"spec_dir", spec.spec_dir},
      {"max_epochs", spec.max_epochs}, {"min_epochs", spec.min_epochs}, {"eta", spec.eta},
      {"brackets", spec.brackets}, {"population", spec.population}, {"ready", spec.ready},
      {"exploit_fraction", spec.exploit_fraction}, {"perturb", spec.perturb},
      {"perturb_keys", spec.perturb_keys},
      {"startup", spec.startup}, {"candidates", spec.candidates}, {"gamma", spec.gamma},
      {"prior_weight", spec.prior_weight}, {"in_flight", spec.in_flight}, {"pruner", spec.pruner},
      {"warm_start", spec.warm_start}, {"from_checkpoint", spec.from_checkpoint},
      {"objectives", [&] {
         json names = json::array();
         for (const auto& o : spec.objectives) names.push_back(o.name);
         return names;
       }()},
      {"data", {{"source", d.source}, {"path", d.path}, {"train_images", d.train_images},
                {"train_labels", d.train_labels}, {"test_images", d.test_images},
                {"test_labels", d.test_labels}, {"train", d.train}, {"test", d.test},
                {"label_column", d.label_column}, {"label_columns", d.label_columns}, {"validation_fraction", d.validation_fraction},
                {"test_fraction", d.test_fraction}, {"partitions", d.partitions},
                {"limit", d.limit}, {"normalization", d.normalization}, {"image_size", d.image_size},
                {"color", d.color}, {"resize", d.resize}, {"skip_bad", d.skip_bad}, {"augment", d.augment},
                {"crop_padding", d.crop_padding}, {"cache", d.cache}}},
      {"cluster", {{"workers", c.workers}, {"threads_per_worker", c.threads_per_worker},
                   {"max_unit_retries", c.max_unit_retries}, {"scheduler", to_string(c.scheduler)},
                   {"replication", c.replication}, {"heartbeat_timeout", c.heartbeat_timeout},
                   {"memory_mb", c.memory_mb}, {"parallelism", to_string(c.parallelism)},
                   {"max_gang", c.max_gang}}},
      {"space", spec.space}};
}

std::string effective_normalization(const DataSpec& data) {
  if (data.normalization != "auto") return data.normalization;
  // IDX holds images (one statistic for all pixels); csv and registered
  // sources hold features of different scales.
  const auto builtin = datasets::parse_builtin_source(data.source);
  const bool images = builtin == datasets::BuiltinSource::idx || builtin == datasets::BuiltinSource::images;
  return datasets::to_string(images ? datasets::NormalizationMode::global : datasets::NormalizationMode::per_feature);
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
  static const std::vector<std::string> keys = {"samples",    "max_epochs", "eta",   "min_epochs",
                                                "brackets",   "population", "ready", "exploit_fraction",
                                                "perturb",    "perturb_keys",
                                                // tpe
                                                "startup", "candidates", "gamma", "prior_weight", "in_flight",
                                                "pruner"};
  return keys;
}


bool metric_higher_is_better(const std::string& metric) { return metric_from_record(metric).higher_is_better(); }

}  // namespace cerebro
