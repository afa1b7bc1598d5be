#include "datasets/prepare.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "datasets/csv.hpp"
#include "datasets/dataset_source.hpp"
#include "runtime/base/file_io.hpp"
#include "datasets/idx.hpp"
#include "datasets/shard.hpp"

namespace cerebro::datasets {

namespace fs = std::filesystem;

namespace {

// More classes than this is a label column that is not a class index (an id, a price...).
constexpr int64_t kMaxClasses = 1'000'000;

struct Loaded {
  Dataset train, test;
  bool has_test = false;
  std::vector<std::string> class_names, inputs;
  std::vector<std::string> feature_names;  // csv
  std::vector<int64_t> category_ids;       // coco instances
};

Status validate(const PrepareOptions& o, const std::string& out_dir) {
  if (!is_known_dataset_source(o.source)) {
    auto registered = registered_dataset_sources();
    if (registered.empty())
      return Status::invalid_argument(fmt::format("source '{}' is not supported, expected {}", o.source,
                                                  fmt::join(builtin_dataset_sources(), ", ")));
    return Status::invalid_argument(fmt::format("source '{}' is not supported, expected {} or a registered source ({})",
                                                o.source, fmt::join(builtin_dataset_sources(), ", "),
                                                fmt::join(registered, ", ")));
  }
  const auto builtin = parse_builtin_source(o.source);
  if (builtin == BuiltinSource::idx &&
      (o.train_images.empty() || o.train_labels.empty() || o.test_images.empty() || o.test_labels.empty())) {
    return Status::invalid_argument("source idx needs train_images, train_labels, test_images and test_labels");
  }
  if (builtin == BuiltinSource::csv && (o.train_csv.empty() || (o.label_column.empty() && o.label_columns.empty()))) {
    return Status::invalid_argument("source csv needs train_csv and label_column");
  }
  if (builtin == BuiltinSource::idx && o.task != TaskKind::classification) {
    return Status::invalid_argument(
        fmt::format("source idx holds class labels; task {} needs csv or a registered source", to_string(o.task)));
  }
  if (builtin == BuiltinSource::images && o.images.path.empty()) {
    return Status::invalid_argument("source images needs a path (a folder tree or a CSV manifest)");
  }
  if (builtin == BuiltinSource::coco && (o.coco.path.empty() || o.coco.annotations.empty())) {
    return Status::invalid_argument("source coco needs a path (the dataset's folder) and an annotations file");
  }
  if (builtin == BuiltinSource::text && o.text.path.empty()) {
    return Status::invalid_argument("source text needs a path (a plain-text file or a folder of them)");
  }
  const bool coco_task = o.task == TaskKind::captioning || o.task == TaskKind::detection;
  if ((builtin == BuiltinSource::coco) != coco_task && builtin.has_value()) {
    return Status::invalid_argument(
        fmt::format("source {} and task {} do not go together: tasks captioning and "
                    "detection read source coco, which holds nothing else",
                    o.source, to_string(o.task)));
  }
  if ((builtin == BuiltinSource::text) != (o.task == TaskKind::language_model) && builtin.has_value()) {
    return Status::invalid_argument(fmt::format(
        "source {} and task {} do not go together: task language_model reads source text, which holds nothing else",
        o.source, to_string(o.task)));
  }
  auto in_range = [](double f) { return f >= 0.0 && f < 1.0; };  // also false for NaN
  if (!in_range(o.validation_fraction)) {
    return Status::invalid_argument(fmt::format("validation_fraction {} is outside [0, 1)", o.validation_fraction));
  }
  if (!in_range(o.test_fraction))
    return Status::invalid_argument(fmt::format("test_fraction {} is outside [0, 1)", o.test_fraction));
  if (o.partitions < 1) return Status::invalid_argument(fmt::format("partitions {} must be at least 1", o.partitions));
  if (o.limit < 0) return Status::invalid_argument(fmt::format("limit {} must be 0 (all) or positive", o.limit));
  if (out_dir.empty()) return Status::invalid_argument("no output directory given");
  std::error_code ec;
  if (fs::exists(out_dir, ec)) {
    if (!fs::is_directory(out_dir, ec)) return Status::invalid_argument(out_dir + ": exists and is not a directory");
    if (!fs::is_empty(out_dir, ec)) {
      return Status::invalid_argument(out_dir +
                                      ": output directory exists and is not empty; remove it or choose another");
    }
  }
  return Status::ok_status();
}

// Gives string classes from two CSV files one shared index: the union of names, sorted.
Status merge_class_names(Loaded& l, const std::vector<std::string>& test_names, const PrepareOptions& o) {
  if (l.class_names.empty() != test_names.empty()) {
    return Status::invalid_argument(fmt::format(
        "{} has {} labels but {} has {} labels: both must be class indices or both names", o.train_csv,
        l.class_names.empty() ? "integer" : "string", o.test_csv, test_names.empty() ? "integer" : "string"));
  }
  if (test_names.empty()) return Status::ok_status();
  std::map<std::string, int64_t> index_of;
  for (const auto& n : l.class_names) index_of.emplace(n, 0);
  for (const auto& n : test_names) index_of.emplace(n, 0);
  std::vector<std::string> merged;
  for (auto& [name, index] : index_of) {
    index = static_cast<int64_t>(merged.size());
    merged.push_back(name);
  }
  auto remap = [&](Dataset& d, const std::vector<std::string>& names) {
    for (auto& label : d.labels) label = index_of[names[static_cast<size_t>(label)]];
  };
  remap(l.train, l.class_names);
  remap(l.test, test_names);
  l.class_names = std::move(merged);
  return Status::ok_status();
}

// Gives the multi-hot columns of two CSV files one shared set of labels: the union, sorted.
void merge_label_sets(Loaded& l, const std::vector<std::string>& test_names) {
  std::vector<std::string> merged = l.class_names;
  merged.insert(merged.end(), test_names.begin(), test_names.end());
  std::sort(merged.begin(), merged.end());
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  auto widen = [&](Dataset& d, const std::vector<std::string>& names) {
    std::vector<float> wide(static_cast<size_t>(d.size()) * merged.size(), 0.0f);
    for (size_t k = 0; k < names.size(); ++k) {
      const size_t to = static_cast<size_t>(std::lower_bound(merged.begin(), merged.end(), names[k]) - merged.begin());
      for (int64_t i = 0; i < d.size(); ++i)
        wide[static_cast<size_t>(i) * merged.size() + to] = d.targets[static_cast<size_t>(i) * names.size() + k];
    }
    d.targets = std::move(wide);
    d.target_width = static_cast<int64_t>(merged.size());
  };
  widen(l.train, l.class_names);
  widen(l.test, test_names);
  l.class_names = std::move(merged);
}

// A source registered by C++ code (datasets/dataset_source.hpp).
Result<Loaded> load_registered(const std::string& name) {
  auto data = load_registered_source(name);
  if (!data) return data.status();
  Loaded l;
  l.train = std::move(data->train);
  if (data->test) {
    l.test = std::move(*data->test);
    l.has_test = true;
  }
  l.class_names = std::move(data->class_names);
  l.inputs = data->inputs.empty() ? std::vector<std::string>{"source:" + name} : std::move(data->inputs);
  return l;
}

Result<Loaded> load_images(const PrepareOptions& o, const std::function<void(const std::string&)>& say) {
  auto listing = list_images(o.images);
  if (!listing) return listing.status();
  auto decoded = decode_images(o.images, *listing, say);
  if (!decoded) return decoded.status();
  Loaded l;
  l.train = std::move(decoded->train);
  l.test = std::move(decoded->test);
  l.has_test = listing->has_test;
  l.class_names = std::move(listing->class_names);
  l.inputs = {o.images.path};
  return l;
}

// A COCO-format captions or instances file: one example per image, its captions or boxes in fields.
Result<Loaded> load_coco_source(const PrepareOptions& o, const std::function<void(const std::string&)>& say) {
  auto coco = load_coco(o.coco, say);
  if (!coco) return coco.status();
  const bool captions = coco->kind == CocoKind::captions;
  if (captions != (o.task == TaskKind::captioning)) {
    return Status::invalid_argument(fmt::format("{}: holds {}, but task {} needs {}", o.coco.annotations,
                                                captions ? "captions" : "boxes (instances)", to_string(o.task),
                                                o.task == TaskKind::captioning ? "captions" : "boxes"));
  }
  Loaded l;
  l.train = std::move(coco->data);
  l.class_names = std::move(coco->category_names);
  l.category_ids = std::move(coco->category_ids);
  l.inputs = {o.coco.annotations};
  return l;
}

Result<Loaded> load_text(const PrepareOptions& o, const std::function<void(const std::string&)>& say) {
  TextSourceOptions text = o.text;
  text.tokenizer = o.tokenizer.kind;
  auto windows = load_text_source(text, say);
  if (!windows) return windows.status();
  Loaded l;
  l.train = std::move(*windows);
  l.inputs = {o.text.path};
  return l;
}

Result<Loaded> load_sources(const PrepareOptions& o, const std::function<void(const std::string&)>& say) {
  const auto builtin = parse_builtin_source(o.source);
  if (!builtin) return load_registered(o.source);
  if (*builtin == BuiltinSource::images) return load_images(o, say);
  if (*builtin == BuiltinSource::coco) return load_coco_source(o, say);
  if (*builtin == BuiltinSource::text) return load_text(o, say);
  Loaded l;
  if (*builtin == BuiltinSource::idx) {
    auto train = load_idx(o.train_images, o.train_labels);
    if (!train) return train.status();
    auto test = load_idx(o.test_images, o.test_labels);
    if (!test) return test.status();
    l.train = std::move(*train);
    l.test = std::move(*test);
    l.has_test = true;
    l.inputs = {o.train_images, o.train_labels, o.test_images, o.test_labels};
  } else {
    const std::vector<std::string> columns =
        o.label_columns.empty() ? std::vector<std::string>{o.label_column} : o.label_columns;
    auto train = load_csv_targets(o.train_csv, o.task, columns, &l.class_names);
    if (!train) return train.status();
    l.train = std::move(*train);
    l.inputs = {o.train_csv};
    auto features = csv_feature_columns(o.train_csv, columns);
    if (features) l.feature_names = std::move(*features);
    if (!o.test_csv.empty()) {
      std::vector<std::string> test_names;
      auto test = load_csv_targets(o.test_csv, o.task, columns, &test_names);
      if (!test) return test.status();
      l.test = std::move(*test);
      l.has_test = true;
      l.inputs.push_back(o.test_csv);
      if (o.task == TaskKind::multilabel) {
        merge_label_sets(l, test_names);
      } else if (o.task == TaskKind::classification) {
        if (Status s = merge_class_names(l, test_names, o); !s.ok()) return s;
      }
    }
  }
  if (o.task != TaskKind::classification && !l.train.has_targets()) {
    return Status::invalid_argument(
        fmt::format("task {} needs targets, but source '{}' gave class labels", to_string(o.task), o.source));
  }
  if (o.task == TaskKind::classification && l.train.has_targets()) {
    return Status::invalid_argument(
        fmt::format("source '{}' gave float targets: set task to regression or multilabel", o.source));
  }
  if (l.has_test && l.test.target_width != l.train.target_width) {
    return Status::invalid_argument(fmt::format("test examples have {} targets but training examples have {}",
                                                l.test.target_width, l.train.target_width));
  }
  if (l.has_test && l.test.sample_shape != l.train.sample_shape) {
    return Status::invalid_argument(fmt::format("test examples have shape [{}] but training examples have shape [{}]",
                                                fmt::join(l.test.sample_shape, ","),
                                                fmt::join(l.train.sample_shape, ",")));
  }
  return l;
}

// Examples [begin, end) of `d`, every field with them.
Dataset rows(const Dataset& d, int64_t begin, int64_t end) {
  std::vector<int64_t> in_order(static_cast<size_t>(end - begin));
  for (size_t i = 0; i < in_order.size(); ++i) in_order[i] = begin + static_cast<int64_t>(i);
  return gather(d, in_order, 0, end - begin);
}

void keep_first(Dataset& d, int64_t n) { d = rows(d, 0, n); }

// Regression targets get the features' treatment: statistics from the training part only, applied to all.
void standardize_targets(Dataset& train, Dataset& validation, Dataset& test, Manifest& m) {
  const auto width = static_cast<size_t>(train.target_width);
  std::vector<double> sum(width, 0.0), sum_sq(width, 0.0);
  const auto n = static_cast<size_t>(train.size());
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < width; ++k) {
      const double y = train.targets[i * width + k];
      sum[k] += y;
      sum_sq[k] += y * y;
    }
  m.target_mean.assign(width, 0.0f);
  m.target_stddev.assign(width, 1.0f);
  for (size_t k = 0; k < width && n > 0; ++k) {
    const double mean = sum[k] / double(n);
    m.target_mean[k] = static_cast<float>(mean);
    m.target_stddev[k] = static_cast<float>(std::sqrt(std::max(0.0, sum_sq[k] / double(n) - mean * mean)));
  }
  for (Dataset* d : {&train, &validation, &test}) {
    for (size_t i = 0; i < static_cast<size_t>(d->size()); ++i)
      for (size_t k = 0; k < width; ++k) {
        const float stddev = m.target_stddev[k] > 0 ? m.target_stddev[k] : 1.0f;
        d->targets[i * width + k] = (d->targets[i * width + k] - m.target_mean[k]) / stddev;
      }
  }
}

int64_t round_fraction(double fraction, int64_t n) { return static_cast<int64_t>(std::llround(fraction * double(n))); }

// Removes the temporary output directory on every exit path, exceptions included, unless released.
class TempDirGuard {
 public:
  explicit TempDirGuard(fs::path p) : path_(std::move(p)) {}
  ~TempDirGuard() {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  TempDirGuard(const TempDirGuard&) = delete;
  TempDirGuard& operator=(const TempDirGuard&) = delete;
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

fs::path normalized_out_dir(const std::string& out_dir) {
  fs::path p = fs::absolute(out_dir).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();  // "out/" -> "out"
  return p;
}

Result<ShardInfo> write_named(const fs::path& dir, const std::string& name, const Dataset& d,
                              const std::function<void(const std::string&)>& say) {
  auto info = write_shard((dir / name).string(), d);
  if (info) say(fmt::format("wrote {} ({} examples, {:.1f} MB)", name, info->count, double(info->bytes) / 1e6));
  return info;
}

}  // namespace

Result<Manifest> prepare(const PrepareOptions& options, const std::string& out_dir,
                         const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  if (Status s = validate(options, out_dir); !s.ok()) return s;

  auto loaded = load_sources(options, say);
  if (!loaded) return loaded.status();
  Loaded& l = *loaded;
  say(fmt::format("loaded {} training examples of shape [{}]{}", l.train.size(), fmt::join(l.train.sample_shape, ","),
                  l.has_test ? fmt::format(" and {} test examples", l.test.size()) : std::string()));
  if (options.limit > 0 && options.limit < l.train.size()) {
    keep_first(l.train, options.limit);
    say(fmt::format("limited to the first {} training examples", options.limit));
  }

  const int64_t n = l.train.size();
  const std::vector<int64_t> order = shuffled_indices(n, options.seed);
  int64_t pool = n;
  if (!l.has_test) {
    const int64_t n_test = round_fraction(options.test_fraction, n);
    l.test = gather(l.train, order, n - n_test, n);
    pool = n - n_test;
    say(fmt::format("carved off {} test examples ({} of the training file)", n_test, options.test_fraction));
  }
  const int64_t n_validation = round_fraction(options.validation_fraction, pool);
  const int64_t n_train = pool - n_validation;
  if (n_train <= 0) {
    return Status::invalid_argument(
        fmt::format("no training examples left: {} examples, {} go to validation", pool, n_validation));
  }
  if (options.partitions > n_train) {
    return Status::invalid_argument(
        fmt::format("{} partitions is more than the {} training examples", options.partitions, n_train));
  }
  Dataset train = gather(l.train, order, 0, n_train);
  Dataset validation = gather(l.train, order, n_train, pool);
  l.train = Dataset{};  // the shuffled copies replace it; free the memory before writing
  say(fmt::format("shuffled with seed {}: {} training, {} validation, {} test examples", options.seed, n_train,
                  n_validation, l.test.size()));

  // Text becomes tokens with a vocabulary of the training split only: a word that only validation or test
  // examples use is unknown to the model, as it would be on new data.
  nlohmann::json tokenizer_json;
  int64_t vocabulary = 0;
  const bool has_text = std::any_of(train.fields.begin(), train.fields.end(),
                                    [](const RaggedField& f) { return f.type == FieldType::text; });
  if (has_text) {
    auto tokenizer = tokenize_splits(train, validation, l.test, options.tokenizer);
    if (!tokenizer) return tokenizer.status();
    tokenizer_json = tokenizer->to_json();
    vocabulary = tokenizer->size();
    say(fmt::format("tokenized with a {} vocabulary of {} tokens from the training split", to_string(tokenizer->kind()),
                    vocabulary));
  }

  int64_t max_label = -1;
  for (const Dataset* d : {&train, &validation, &l.test}) {
    for (int64_t label : d->labels) {
      if (label < 0 || label >= kMaxClasses) {
        return Status::invalid_argument(
            fmt::format("label {} is out of range [0, {}): labels must be class indices", label, kMaxClasses));
      }
      max_label = std::max(max_label, label);
    }
  }

  Manifest m;
  m.task = options.task;
  if (train.has_targets()) {
    max_label = train.target_width - 1;
    if (options.task == TaskKind::regression) standardize_targets(train, validation, l.test, m);
  }
  m.feature_names = l.feature_names;
  m.source = options.source;
  m.images_resized = options.images.resize;
  m.inputs = l.inputs;
  m.seed = options.seed;
  m.train_examples = n_train;
  m.sample_shape = train.sample_shape;
  m.num_classes = std::max<int64_t>(max_label + 1, static_cast<int64_t>(l.class_names.size()));
  m.class_names = l.class_names;
  m.category_ids = l.category_ids;
  m.tokenizer = std::move(tokenizer_json);
  if (vocabulary > 0) m.num_classes = vocabulary;  // the outputs of a model of these tokens
  m.normalization_mode = to_string(options.normalization);
  m.normalization = compute_normalization(train, options.normalization);
  // Statistics of the training part's own shape: they fit each part.
  for (Dataset* part : {&train, &validation, &l.test}) {
    if (auto applied = apply_normalization(*part, m.normalization); !applied.ok()) return applied;
  }
  if (options.normalization != NormalizationMode::none) {
    say(fmt::format("normalization {} from the training part only ({} statistics)", m.normalization_mode,
                    m.normalization.mean.size()));
  }

  // Write everything next to out_dir, then rename: readers see all of it or nothing.
  const fs::path final_dir = normalized_out_dir(out_dir);
  std::error_code ec;
  fs::create_directories(final_dir.parent_path(), ec);
  if (ec) return Status::io_error(final_dir.parent_path().string() + ": cannot create directory: " + ec.message());
  static std::atomic<int> counter{0};
  const fs::path tmp_dir =
      final_dir.parent_path() / fmt::format(".{}.tmp-{}-{}", final_dir.filename().string(), ::getpid(), counter++);
  fs::remove_all(tmp_dir, ec);
  if (!fs::create_directory(tmp_dir, ec)) {
    return Status::io_error(tmp_dir.string() + ": cannot create temporary directory: " + ec.message());
  }
  TempDirGuard guard(tmp_dir);

  int64_t start = 0;
  for (int p = 0; p < options.partitions; ++p) {
    // The first n_train % partitions chunks take one extra example.
    const int64_t size = n_train / options.partitions + (p < n_train % options.partitions ? 1 : 0);
    auto info = write_named(tmp_dir, fmt::format("part-{:04d}.bin", p), rows(train, start, start + size), say);
    if (!info) return info.status();
    m.partitions.push_back(*info);
    start += size;
  }
  auto validation_info = write_named(tmp_dir, "validation.bin", validation, say);
  if (!validation_info) return validation_info.status();
  m.validation = *validation_info;
  auto test_info = write_named(tmp_dir, "test.bin", l.test, say);
  if (!test_info) return test_info.status();
  m.test = *test_info;
  if (Status s = write_manifest(tmp_dir.string(), m); !s.ok()) return s;
  if (Status s = fsync_directory(tmp_dir.string()); !s.ok()) return s;

  // rename(2) replaces an empty directory, which validate() allowed.
  fs::rename(tmp_dir, final_dir, ec);
  if (ec)
    return Status::io_error(
        fmt::format("{}: cannot move the prepared data into place: {}", final_dir.string(), ec.message()));
  guard.release();
  if (Status s = fsync_directory(final_dir.parent_path().string()); !s.ok()) return s;
  say(fmt::format("wrote {} partitions and {} to {}", options.partitions, kManifestFileName, final_dir.string()));
  return m;
}

Result<Dataset> load_shard(const std::string& dir, const Manifest& manifest, const ShardInfo& shard,
                           ShardStorage storage) {
  const std::string path = (fs::path(dir) / shard.file).string();
  auto data = storage == ShardStorage::mapped ? map_shard(path, shard.checksum) : read_shard(path, shard.checksum);
  if (!data) return data.status();
  if (data->size() != shard.count) {
    return Status::corruption(
        fmt::format("{}: holds {} examples, the manifest says {}", path, data->size(), shard.count));
  }
  if (data->sample_shape != manifest.sample_shape) {
    return Status::corruption(fmt::format("{}: sample shape [{}] differs from the manifest's [{}]", path,
                                          fmt::join(data->sample_shape, ","), fmt::join(manifest.sample_shape, ",")));
  }
  // Class labels and the structured tasks' fields have no target row; regression and multilabel one each.
  const bool target_rows = manifest.task == TaskKind::regression || manifest.task == TaskKind::multilabel;
  const int64_t width = target_rows ? manifest.num_classes : 0;
  if (data->target_width != width) {
    return Status::corruption(fmt::format("{}: holds {} targets per example, the manifest's {} task has {}", path,
                                          data->target_width, to_string(manifest.task), width));
  }
  for (size_t i = 0; i < data->labels.size(); ++i) {
    if (data->labels[i] < 0 || data->labels[i] >= manifest.num_classes) {
      return Status::corruption(
          fmt::format("{}: example {} has label {}, outside [0, {})", path, i, data->labels[i], manifest.num_classes));
    }
  }
  return data;
}

Status verify_prepared(const std::string& dir) {
  auto manifest = read_manifest(dir);
  if (!manifest) return manifest.status();
  std::vector<const ShardInfo*> shards;
  for (const auto& p : manifest->partitions) shards.push_back(&p);
  shards.push_back(&manifest->validation);
  shards.push_back(&manifest->test);
  for (const ShardInfo* shard : shards) {
    const std::string path = (fs::path(dir) / shard->file).string();
    auto sum = file_checksum(path);
    if (!sum) return sum.status();
    if (*sum != shard->checksum)
      return Status::corruption(
          fmt::format("{}: checksum {} does not match the manifest's {}", path, *sum, shard->checksum));
  }
  return Status::ok_status();
}

Result<PreparedData> load_prepared(const std::string& dir, ShardStorage storage) {
  auto manifest = read_manifest(dir);
  if (!manifest) return manifest.status();
  PreparedData out;
  out.manifest = std::move(*manifest);
  for (const auto& part : out.manifest.partitions) {
    auto data = load_shard(dir, out.manifest, part, storage);
    if (!data) return data.status();
    out.partitions.push_back(std::make_shared<const Dataset>(std::move(*data)));
  }
  auto validation = load_shard(dir, out.manifest, out.manifest.validation, storage);
  if (!validation) return validation.status();
  out.validation = std::make_shared<const Dataset>(std::move(*validation));
  auto test = load_shard(dir, out.manifest, out.manifest.test, storage);
  if (!test) return test.status();
  out.test = std::make_shared<const Dataset>(std::move(*test));
  return out;
}

}  // namespace cerebro::datasets
