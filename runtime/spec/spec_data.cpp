// [data]: where the examples come from and how they are split, normalised and
// augmented (runtime/spec/spec_section.hpp).
#include "runtime/spec/spec_section.hpp"
#include "runtime/spec/spec_paths.hpp"

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

}  // namespace

void parse_data(Section s, DataSpec& data, const PathBase& base) {
  std::vector<std::string> known = {"source", "validation_fraction", "test_fraction", "partitions",
                                    "limit",  "normalization",       "cache",         "read_ahead"};
  for (const auto& [key, sources] : source_specific_keys()) known.push_back(key);
  s.check_unknown(known);

  s.read_string("source", data.source, data_source_names());
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
