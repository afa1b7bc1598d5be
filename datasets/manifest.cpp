#include "datasets/manifest.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "datasets/dataset_source.hpp"
#include "runtime/base/file_io.hpp"

namespace cerebro::datasets {

using nlohmann::json;

namespace {

json shard_to_json(const ShardInfo& s) {
  return {{"file", s.file}, {"count", s.count}, {"bytes", s.bytes}, {"checksum", s.checksum}};
}

// Typed field access with errors that say which key is missing or has the wrong type.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  const json* field(const json& obj, const std::string& key, const std::string& where) {
    if (!error_.ok()) return nullptr;
    if (!obj.is_object()) {
      fail(where.empty() ? "the document is not a JSON object" : "'" + where + "' is not an object");
      return nullptr;
    }
    auto it = obj.find(key);
    if (it == obj.end()) {
      fail("missing key '" + path(where, key) + "'");
      return nullptr;
    }
    return &*it;
  }

  template <class T>
  void get(const json& obj, const std::string& key, T& out, const std::string& where = "") {
    const json* value = field(obj, key, where);
    if (!value) return;
    const char* wrong = nullptr;  // why the value is not a T
    if constexpr (std::is_same_v<T, bool>) {
      if (!value->is_boolean()) wrong = "not a boolean";
    } else if constexpr (std::is_integral_v<T>) {
      if (!value->is_number_integer())
        wrong = "not an integer";
      else if (std::is_unsigned_v<T> && !value->is_number_unsigned())
        wrong = "negative";
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (!value->is_number()) wrong = "not a number";
    }
    std::string why = wrong ? wrong : "";
    if (!wrong) {
      try {  // nlohmann's get throws for a value of another type (a string, a list ...)
        out = value->get<T>();
      } catch (const json::exception& e) {
        why = e.what();
      }
    }
    if (!why.empty())
      fail(fmt::format("key '{}' has the wrong type ({}): {}", path(where, key), value->type_name(), why));
  }

  void get_shard(const json& obj, const std::string& key, ShardInfo& out, const std::string& where = "") {
    const json* value = field(obj, key, where);
    if (!value) return;
    const std::string here = path(where, key);
    get(*value, "file", out.file, here);
    get(*value, "count", out.count, here);
    get(*value, "bytes", out.bytes, here);
    get(*value, "checksum", out.checksum, here);
  }

  void fail(const std::string& message) {
    if (error_.ok()) error_ = Status::invalid_argument(file_ + ": " + message);
  }
  const Status& error() const { return error_; }

 private:
  static std::string path(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }
  std::string file_;
  Status error_;
};

Status check_consistency(const Manifest& m, Reader& reader) {
  if (m.format_version != kManifestFormatVersion) {
    reader.fail(fmt::format("format_version {} is not supported (this build reads {})", m.format_version,
                            kManifestFormatVersion));
  }
  if (m.partitions.empty()) reader.fail("no partitions listed");
  int64_t total = 0;
  for (const auto& p : m.partitions) total += p.count;
  if (reader.error().ok() && total != m.train_examples) {
    reader.fail(fmt::format("partitions hold {} examples but train_examples is {}", total, m.train_examples));
  }
  if (!parse_normalization_mode(m.normalization_mode).ok()) {
    reader.fail("normalization.mode '" + m.normalization_mode + "' is not none, global or per_feature");
  }
  int64_t numel = m.sample_shape.empty() ? 0 : 1;
  for (int64_t d : m.sample_shape) numel *= d;
  const size_t n = m.normalization.mean.size();
  if (n != m.normalization.stddev.size() || (n != 1 && static_cast<int64_t>(n) != numel)) {
    reader.fail(fmt::format("normalization has {} means and {} stddevs, expected 1 or {} of each", n,
                            m.normalization.stddev.size(), numel));
  }
  // Shard names are plain file names inside the manifest's directory, never paths that lead elsewhere.
  auto check_name = [&](const ShardInfo& shard, const std::string& what) {
    const std::filesystem::path name(shard.file);
    if (shard.file.empty() || name.has_parent_path() || shard.file == "." || shard.file == "..") {
      reader.fail(fmt::format("{} file '{}' must be a plain file name in the same directory", what, shard.file));
    }
  };
  for (const auto& p : m.partitions) check_name(p, "partition");
  check_name(m.validation, "validation");
  check_name(m.test, "test");
  if (m.num_classes <= 0) reader.fail(fmt::format("num_classes {} must be positive", m.num_classes));
  if (!m.category_ids.empty() && static_cast<int64_t>(m.category_ids.size()) != m.num_classes) {
    reader.fail(fmt::format("category_ids has {} ids for {} classes", m.category_ids.size(), m.num_classes));
  }
  if (m.target_mean.size() != m.target_stddev.size() ||
      (m.task == TaskKind::regression && static_cast<int64_t>(m.target_mean.size()) != m.num_classes)) {
    reader.fail(fmt::format("targets has {} means and {} stddevs for {} regression targets", m.target_mean.size(),
                            m.target_stddev.size(), m.task == TaskKind::regression ? m.num_classes : 0));
  }
  return reader.error();
}

}  // namespace

Status write_manifest(const std::string& dir, const Manifest& m) {
  json doc;
  doc["format_version"] = m.format_version;
  doc["source"] = m.source;
  doc["inputs"] = m.inputs;
  doc["seed"] = m.seed;
  doc["train_examples"] = m.train_examples;
  doc["sample_shape"] = m.sample_shape;
  doc["num_classes"] = m.num_classes;
  doc["class_names"] = m.class_names;
  doc["task"] = to_string(m.task);
  if (!m.feature_names.empty()) doc["feature_names"] = m.feature_names;
  if (!m.tokenizer.is_null()) doc["tokenizer"] = m.tokenizer;
  if (!m.category_ids.empty()) doc["category_ids"] = m.category_ids;
  if (parse_builtin_source(m.source) == BuiltinSource::images) doc["images"] = {{"resize", m.images_resized}};
  if (!m.target_mean.empty()) doc["targets"] = {{"mean", m.target_mean}, {"stddev", m.target_stddev}};
  doc["normalization"] = {
      {"mode", m.normalization_mode}, {"mean", m.normalization.mean}, {"stddev", m.normalization.stddev}};
  json parts = json::array();
  for (const auto& p : m.partitions) parts.push_back(shard_to_json(p));
  doc["partitions"] = parts;
  doc["validation"] = shard_to_json(m.validation);
  doc["test"] = shard_to_json(m.test);
  const auto path = (std::filesystem::path(dir) / kManifestFileName).string();
  return write_file_atomically(path, doc.dump(2) + "\n");
}

Result<Manifest> read_manifest(const std::string& dir) {
  const auto path = (std::filesystem::path(dir) / kManifestFileName).string();
  auto text = read_whole_file(path);
  if (!text) return text.status();
  json doc;
  try {
    doc = json::parse(*text);
  } catch (const json::parse_error& e) {
    return Status::invalid_argument(fmt::format("{}: not valid JSON (at byte {})", path, e.byte));
  }
  Reader r(path);
  Manifest m;
  r.get(doc, "format_version", m.format_version);
  if (r.error().ok() && m.format_version != kManifestFormatVersion) {
    // Say "wrong version" rather than "missing key" when a newer writer changed the layout.
    return Status::invalid_argument(fmt::format("{}: format_version {} is not supported (this build reads {})", path,
                                                m.format_version, kManifestFormatVersion));
  }
  r.get(doc, "source", m.source);
  r.get(doc, "inputs", m.inputs);
  r.get(doc, "seed", m.seed);
  r.get(doc, "train_examples", m.train_examples);
  r.get(doc, "sample_shape", m.sample_shape);
  r.get(doc, "num_classes", m.num_classes);
  r.get(doc, "class_names", m.class_names);
  if (doc.is_object() && doc.contains("task")) {
    std::string task;
    r.get(doc, "task", task);
    if (auto kind = parse_task_kind(task)) {
      m.task = *kind;
    } else if (r.error().ok()) {
      r.fail(fmt::format("task '{}' is not {}", task, fmt::join(task_kind_names(), ", ")));
    }
  }
  if (doc.is_object() && doc.contains("feature_names")) r.get(doc, "feature_names", m.feature_names);
  if (doc.is_object() && doc.contains("tokenizer")) m.tokenizer = doc["tokenizer"];
  if (doc.is_object() && doc.contains("category_ids")) r.get(doc, "category_ids", m.category_ids);
  if (doc.is_object() && doc.contains("images")) r.get(doc["images"], "resize", m.images_resized, "images");
  if (doc.is_object() && doc.contains("targets")) {
    r.get(doc["targets"], "mean", m.target_mean, "targets");
    r.get(doc["targets"], "stddev", m.target_stddev, "targets");
  }
  if (const json* norm = r.field(doc, "normalization", "")) {
    r.get(*norm, "mode", m.normalization_mode, "normalization");
    r.get(*norm, "mean", m.normalization.mean, "normalization");
    r.get(*norm, "stddev", m.normalization.stddev, "normalization");
  }
  if (const json* parts = r.field(doc, "partitions", "")) {
    if (!parts->is_array()) r.fail("key 'partitions' should be an array");
    for (size_t i = 0; r.error().ok() && i < parts->size(); ++i) {
      ShardInfo info;
      const std::string where = fmt::format("partitions[{}]", i);
      const json& entry = (*parts)[i];
      r.get(entry, "file", info.file, where);
      r.get(entry, "count", info.count, where);
      r.get(entry, "bytes", info.bytes, where);
      r.get(entry, "checksum", info.checksum, where);
      m.partitions.push_back(std::move(info));
    }
  }
  r.get_shard(doc, "validation", m.validation);
  r.get_shard(doc, "test", m.test);
  if (!r.error().ok()) return r.error();
  if (Status s = check_consistency(m, r); !s.ok()) return s;
  return m;
}

}  // namespace cerebro::datasets
