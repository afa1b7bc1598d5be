// [data]: where the examples come from and how they are split, normalised and
// augmented (runtime/spec/spec_section.hpp).
#include "runtime/spec/spec_section.hpp"
#include "runtime/spec/spec_paths.hpp"

#include <cctype>

#include "datasets/dataset_source.hpp"
#include "datasets/normalization.hpp"
#include "datasets/task_kind.hpp"
#include "datasets/tokenizer.hpp"

namespace cerebro::spec_detail {

namespace {

// Which built-in sources a [data] key applies to (keys every source takes are not listed).
const std::vector<std::pair<std::string, std::vector<datasets::BuiltinSource>>>& source_specific_keys() {
  using datasets::BuiltinSource;
  static const std::vector<std::pair<std::string, std::vector<BuiltinSource>>> keys = {
      {"path", {BuiltinSource::idx, BuiltinSource::images, BuiltinSource::coco, BuiltinSource::text}},
      {"train_images", {BuiltinSource::idx}},
      {"train_labels", {BuiltinSource::idx}},
      {"test_images", {BuiltinSource::idx}},
      {"test_labels", {BuiltinSource::idx}},
      {"train", {BuiltinSource::csv}},
      {"test", {BuiltinSource::csv}},
      {"label_column", {BuiltinSource::csv}},
      {"image_size", {BuiltinSource::images, BuiltinSource::coco}},
      {"color", {BuiltinSource::images, BuiltinSource::coco}},
      {"resize", {BuiltinSource::images, BuiltinSource::coco}},
      {"annotations", {BuiltinSource::coco}},
      {"image_root", {BuiltinSource::coco}},
      {"window", {BuiltinSource::text}},
      {"tokenizer", {BuiltinSource::coco, BuiltinSource::text}},
      {"min_count", {BuiltinSource::coco, BuiltinSource::text}},
      {"max_vocab", {BuiltinSource::coco, BuiltinSource::text}},
      {"skip_bad", {BuiltinSource::images}},
      {"augment", {BuiltinSource::idx, BuiltinSource::images}},
      {"crop_padding", {BuiltinSource::idx, BuiltinSource::images}},
  };
  return keys;
}

// A value of a registered dataset's table as TOML: what a [data] key holds (a string, a number, a
// boolean or an array of them); false for anything else.
bool to_toml(const json& value, toml::array& out);
bool insert_toml(toml::table& table, const std::string& key, const json& value) {
  if (value.is_string()) return table.insert_or_assign(key, value.get<std::string>()), true;
  if (value.is_boolean()) return table.insert_or_assign(key, value.get<bool>()), true;
  if (value.is_number_integer()) return table.insert_or_assign(key, value.get<int64_t>()), true;
  if (value.is_number_float()) return table.insert_or_assign(key, value.get<double>()), true;
  if (!value.is_array()) return false;
  toml::array array;
  if (!to_toml(value, array)) return false;
  table.insert_or_assign(key, std::move(array));
  return true;
}
bool to_toml(const json& value, toml::array& out) {
  for (const auto& item : value) {
    if (item.is_string()) {
      out.push_back(item.get<std::string>());
    } else if (item.is_boolean()) {
      out.push_back(item.get<bool>());
    } else if (item.is_number_integer()) {
      out.push_back(item.get<int64_t>());
    } else if (item.is_number_float()) {
      out.push_back(item.get<double>());
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

json take_dataset(toml::table& data, const json& registered, Problems& problems) {
  const toml::node* named = data.get("dataset");
  if (!named || !named->is_string()) return json::object();  // absent, or reported by parse_data
  const std::string name = named->as_string()->get();
  const auto region = named->source();
  if (!registered.is_object() || !registered.contains(name)) {
    std::vector<std::string> names;
    if (registered.is_object())
      for (const auto& [known, table] : registered.items()) names.push_back(known);
    problems.add(region, fmt::format("[data] dataset \"{}\" is not registered ({})", name,
                                     names.empty() ? std::string("none is: register one with POST /api/v1/datasets")
                                                   : "registered: " + quoted_alternatives(names)));
    return json::object();
  }
  const json& table = registered.at(name);
  for (const auto& [key, value] : table.items()) {
    if (const toml::node* own = data.get(key)) {
      problems.add(own->source(), fmt::format("[data] {} is set by the registered dataset \"{}\" (line {}): "
                                              "leave it out here, or register another dataset",
                                              key, name, region.begin.line));
      continue;
    }
    if (!insert_toml(data, key, value))
      problems.add(region, fmt::format("[data] dataset \"{}\": its key {} is not a value [data] takes", name, key));
  }
  return json{{name, table}};
}

void parse_data(Section s, DataSpec& data, const PathBase& base) {
  std::vector<std::string> known = {"source",        "dataset",    "validation_fraction",
                                    "test_fraction", "partitions", "limit",
                                    "normalization", "cache",      "read_ahead"};
  for (const auto& [key, sources] : source_specific_keys()) known.push_back(key);
  s.check_unknown(known);

  s.read_string("source", data.source, data_source_names());
  s.read_string("dataset", data.dataset);
  for (auto [key, field] : data_path_fields(data)) {
    s.read_string(key, *field);
    *field = resolve_input_path(base, *field);
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
  // "auto" (the first name) is the only accepted name that is no mode: it leaves the field unset.
  std::string normalization;
  s.read_string("normalization", normalization, normalization_names());
  if (auto mode = datasets::parse_normalization_mode(normalization); mode.ok()) data.normalization = *mode;
  s.read_image_size("image_size", data.image_size);
  s.read_kind("color", data.color, image_color_names(), parse_image_color);
  s.read_bool("resize", data.resize);
  s.read_bool("skip_bad", data.skip_bad);
  std::vector<std::string> augments;
  s.read_choices("augment", augments, augment_names());
  for (const auto& name : augments) data.augment.push_back(*parse_augment(name));
  s.read_int("crop_padding", data.crop_padding, 1, 1024);
  s.read_bool("cache", data.cache);
  s.read_bool("read_ahead", data.read_ahead);
  // Relative to the dataset's folder, not to the spec: the ETL joins them to `path`.
  s.read_string("annotations", data.annotations);
  s.read_string("image_root", data.image_root);
  s.read_int("window", data.window, 2, 1'000'000);
  s.read_kind("tokenizer", data.tokenizer, datasets::tokenizer_kind_names(), datasets::parse_tokenizer_kind);
  s.read_int("min_count", data.min_count, 1, INT64_MAX);
  s.read_int("max_vocab", data.max_vocab, 5, 100'000'000);

  if (!s.has("source")) {
    if (s.has("dataset")) return;  // a dataset that is not registered: reported by take_dataset
    return s.missing(
        "source",
        "give source = \"idx\" (MNIST-layout files), \"csv\", \"images\", \"coco\" or \"text\" (docs/TASKS.md)");
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
  if (s.has("crop_padding") &&
      std::find(data.augment.begin(), data.augment.end(), Augment::random_crop) == data.augment.end())
    s.report("crop_padding", "applies only with augment = [\"random_crop\", ...]");
  if (!builtin) return;  // a source registered by C++ code: the loader supplies the examples
  if (*builtin == datasets::BuiltinSource::idx) {
    const bool any_file =
        s.has("train_images") || s.has("train_labels") || s.has("test_images") || s.has("test_labels");
    if (s.has("path") && any_file) {
      s.report("path", "and the explicit files (train_images ...) exclude each other: give one");
    } else if (!s.has("path") && !any_file) {
      s.missing("path",
                "give path = the directory with the IDX files, or all four of "
                "train_images, train_labels, test_images and test_labels");
    } else if (!s.has("path")) {
      for (const auto& key : {"train_images", "train_labels", "test_images", "test_labels"}) {
        if (!s.has(key)) s.missing(key, "give all four IDX files, or path = the directory holding them");
      }
    }
    if (s.has("test_fraction"))
      s.report("test_fraction", "applies only to source = \"csv\", \"images\" or a registered source");
  } else if (*builtin == datasets::BuiltinSource::csv) {
    if (!s.has("train")) s.missing("train", "give train = the CSV file to train on");
    if (!s.has("label_column")) s.missing("label_column", "give the name of the CSV column holding the label");
    if (s.has("test") && s.has("test_fraction")) {
      s.report("test_fraction", "applies only when no test file is given (the test set is split from train)");
    }
  } else if (*builtin == datasets::BuiltinSource::coco) {
    if (!s.has("path")) s.missing("path", "give path = the dataset's folder (the annotations and images)");
    if (!s.has("annotations"))
      s.missing("annotations", "give annotations = a COCO captions or instances file in path, e.g. \"captions.json\"");
  } else if (*builtin == datasets::BuiltinSource::text) {
    if (!s.has("path")) s.missing("path", "give path = a plain-text file or a folder of them");
    if (!s.has("window")) s.missing("window", "give window = the tokens per example, e.g. 64");
  } else if (!s.has("path")) {
    s.missing("path",
              "give path = a folder with train/<class>/ image folders, or a CSV manifest with path,label columns");
  }
}

// The label columns the task reads: several only for regression.
void check_task_labels(Section s, const ExperimentSpec& spec) {
  if (spec.data.label_columns.size() > 1 && spec.task != datasets::TaskKind::regression) {
    s.report("label_column", fmt::format("lists {} columns: several target columns are for task = \"regression\"; "
                                         "task {} reads one",
                                         spec.data.label_columns.size(), datasets::to_string(spec.task)));
  }
  const auto builtin = datasets::parse_builtin_source(spec.data.source);
  using datasets::BuiltinSource;
  using datasets::TaskKind;
  // The structured tasks and the sources that hold their targets go together.
  if (builtin == BuiltinSource::coco && spec.task != TaskKind::captioning && spec.task != TaskKind::detection) {
    s.report("source", fmt::format("coco holds captions or boxes; set [experiment] task = \"captioning\" or "
                                   "\"detection\" (it is {})",
                                   datasets::to_string(spec.task)));
    return;
  }
  if (builtin == BuiltinSource::text && spec.task != TaskKind::language_model) {
    s.report("source", fmt::format("text holds token windows; set [experiment] task = \"language_model\" (it is {})",
                                   datasets::to_string(spec.task)));
    return;
  }
  if (datasets::has_structured_targets(spec.task)) {
    const BuiltinSource wanted = spec.task == TaskKind::language_model ? BuiltinSource::text : BuiltinSource::coco;
    const bool fits = !builtin || builtin == wanted;
    if (!fits) {
      s.report("source", fmt::format("task {} needs source = \"{}\" (or a registered source), not {}",
                                     datasets::to_string(spec.task),
                                     spec.task == TaskKind::language_model ? "text" : "coco", spec.data.source));
    }
    return;
  }
  if (spec.task != datasets::TaskKind::classification &&
      (builtin == datasets::BuiltinSource::idx || builtin == datasets::BuiltinSource::images)) {
    s.report("source", fmt::format("{} holds class labels; task {} needs source = \"csv\" (or a registered source)",
                                   spec.data.source, datasets::to_string(spec.task)));
  }
}

}  // namespace cerebro::spec_detail

namespace cerebro {

Status check_dataset_name(const std::string& name) {
  const bool ok =
      !name.empty() && name.size() <= 64 && name.front() != '.' && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (ok) return Status::ok_status();
  return Status::invalid_argument(fmt::format(
      "a dataset's name has 1 to 64 letters, digits, \"-\", \"_\" and \".\" and does not start with \".\"; got "
      "\"{}\"",
      name.substr(0, 80)));
}

Result<CheckedDataset> check_dataset_table(const nlohmann::json& table, const std::string& dir,
                                           const std::vector<std::string>& search_dirs, const std::string& origin) {
  using namespace spec_detail;
  if (!table.is_object() || table.empty())
    return Status::invalid_argument(origin + ": a dataset is a table of [data] keys, e.g. {\"source\": \"csv\", ...}");
  if (table.contains("dataset"))
    return Status::invalid_argument(origin + ": a dataset cannot name another dataset (its key dataset)");
  toml::table data;
  for (const auto& [key, value] : table.items())
    if (!insert_toml(data, key, value))
      return Status::invalid_argument(
          fmt::format("{}: [data] {} takes a string, a number, a boolean or a list of them", origin, key));
  Problems problems(origin);
  CheckedDataset checked;
  parse_data(Section(&data, "data", problems), checked.data, PathBase{dir, search_dirs});
  if (!problems.empty()) return problems.status();
  checked.table = table;
  for (auto [key, field] : data_path_fields(checked.data))
    if (table.contains(key)) checked.table[key] = *field;  // absolute, as parse_data resolved it
  return checked;
}

}  // namespace cerebro
