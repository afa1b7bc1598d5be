#pragma once
// Private to runtime/spec: how spec.cpp and the files of its sections read a
// spec. The sections are parsed by their own files (spec_experiment.cpp:
// [experiment] and [space]; spec_data.cpp: [data]; spec_cluster.cpp:
// [cluster]) into one ExperimentSpec; every problem is collected with its
// position, so one run of the parser reports them all, in file order.

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "runtime/spec/param_value.hpp"
#include "runtime/spec/spec.hpp"

namespace cerebro::spec_detail {

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
  struct Entry {
    uint32_t line, column;
    std::string text;
  };
  std::string origin_;
  std::vector<Entry> list_;
};

// A TOML value as JSON; nullopt for dates and times, which no key accepts.
std::optional<json> to_json(const toml::node& node);

// "string \"3\"", "float 3.0": what the user wrote, for "got ..." messages.
std::string describe_node(const toml::node& node);

// Some float inside a value that is not finite (TOML allows inf and nan).
const toml::node* find_non_finite(const toml::node& node);

// An absolute, lexically normal path; relative paths are taken from `base`.
std::string resolve_path(const std::string& base, const std::string& path);

// Where the input files a spec names (data and TorchScript models) are looked for: a relative path is
// taken from `dir` when the file is there, else from the first of `search_dirs` that holds it (a
// coordinator's data roots, docs/CLUSTER.md "Data roots"), else from `dir` again so the error names it.
struct PathBase {
  std::string dir;
  std::vector<std::string> search_dirs;
};
std::string resolve_input_path(const PathBase& base, const std::string& path);

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
    if (node)
      problems_.add(node->source(), message);
    else if (where())
      problems_.add(*where(), message);
    else
      problems_.add(message);
  }
  void missing(const std::string& key, const std::string& hint) override {
    std::string message = fmt::format("[{}] {} is required: {}", name_, key, hint);
    if (where())
      problems_.add(*where(), message);
    else
      problems_.add(message);
  }

  void read_string(const std::string& key, std::string& out, const std::vector<std::string>& allowed = {}) {
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
    const double value =
        node->is_integer() ? static_cast<double>(node->as_integer()->get()) : node->as_floating_point()->get();
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
    if (!list || list->size() != 2 || !in_range(*list->get(0)) || !in_range(*list->get(1)))
      return wrong(key, expected, *node);
    out = {list->get(0)->as_integer()->get(), list->get(1)->as_integer()->get()};
  }

  // A complete message (already naming the key) at the key's position, or at
  // the section when the key is absent.
  void report_message(const std::string& key, const std::string& message) override {
    const toml::node* node = get(key);
    if (node)
      problems_.add(node->source(), message);
    else if (where())
      problems_.add(*where(), message);
    else
      problems_.add(message);
  }

  // Reports keys not in `known`, at the key's own position.
  void check_unknown(const std::vector<std::string>& known) {
    if (!table_) return;
    for (const auto& [k, v] : *table_) {
      const std::string key(k.str());
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      problems_.add(k.source(), fmt::format("unknown key '{}' in [{}] ({})", key, name_, suggest_name(key, known)));
    }
  }

 private:
  static double number_of(const toml::node& node) {
    return node.is_integer() ? static_cast<double>(node.as_integer()->get()) : node.as_floating_point()->get();
  }

  void wrong(const std::string& key, const std::string& expected, const toml::node& node) {
    problems_.add(node.source(), fmt::format("[{}] {} must be {}, got {}", name_, key, expected, describe_node(node)));
  }

  const toml::table* table_;
  std::string name_;
  Problems& problems_;
};

// The sections, each from its own file: each reads its keys into `spec` and
// reports what is wrong to the section's problems.
// spec_experiment.cpp; `base` is where relative paths start from.
void parse_experiment(Section s, ExperimentSpec& spec, const SearchChecks& checks, const PathBase& base);
void parse_space(const toml::table* table, ExperimentSpec& spec, Problems& problems, const PathBase& base,
                 bool allow_distributions);
// spec_data.cpp. check_task_labels: the label columns the task reads
// (several only for regression), once [experiment] and [data] are read.
void check_task_labels(Section s, const ExperimentSpec& spec);
void parse_data(Section s, DataSpec& data, const PathBase& base);
// Before parse_data: a `dataset = "NAME"` in `data` (a mutable copy of the spec's [data]) takes the keys of
// that registered dataset (`registered`: {name: table}) into the table; a key the spec sets too is a
// problem. Returns {NAME: table} for the run to keep (empty without one).
json take_dataset(toml::table& data, const json& registered, Problems& problems);
// spec_cluster.cpp.
void parse_cluster(Section s, ClusterSpec& cluster);

}  // namespace cerebro::spec_detail
