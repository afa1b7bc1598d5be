#pragma once
// The experiment spec: a TOML file with the sections [experiment], [data],
// [cluster] and [space]. docs/SPEC.md documents every key. Parsing checks
// types, ranges and required keys and reports each problem as
// "file:line:col: message"; it does not touch the data files (the ETL does).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/status.hpp"
#include "runtime/spec/metric.hpp"
#include "runtime/spec/objective.hpp"
#include "runtime/spec/parallelism.hpp"
#include "runtime/spec/scheduler_kind.hpp"
#include "runtime/spec/search_kind.hpp"
#include "runtime/spec/spec_choices.hpp"

namespace cerebro {

namespace datasets {
enum class NormalizationMode;  // datasets/normalization.hpp
enum class TokenizerKind;      // datasets/tokenizer.hpp
}  // namespace datasets

struct DataSpec {
  std::string source;   // "idx" | "csv" | "images" | "coco" | "text" | a registered source name (required)
  std::string dataset;  // the registered dataset whose keys the spec's [data] takes ("": none)
  std::string path;     // idx: directory with the MNIST-layout files; images: a folder
                        // tree (train/<class>/*, optional test/<class>/*) or a CSV manifest;
                        // coco: the dataset's folder; text: a plain-text file or a folder of them
  std::string train_images, train_labels, test_images, test_labels;  // idx: explicit files instead of path
  std::string train, test;                                           // csv files (test optional)
  std::string label_column;                // csv: required (the first column when a list is given)
  std::vector<std::string> label_columns;  // csv: every label column (regression: one or more targets)
  double validation_fraction = 0.1;        // [0, 1)
  double test_fraction = 0.1;              // csv without `test`: (0, 1)
  int partitions = 0;                      // 0 = one per worker
  int64_t limit = 0;                       // 0 = all training examples; else the first N
  // none | global | per_feature; nullopt is "auto" (effective_normalization:
  // global for idx and images, else per_feature)
  std::optional<datasets::NormalizationMode> normalization;
  // images: decoding (docs/SPEC.md "Image data")
  std::vector<int64_t> image_size;  // {height, width}; empty: the first image's size
  ImageColor color = ImageColor::grayscale;
  bool resize = true;     // false: an image of another size is an error naming it
  bool skip_bad = false;  // true: undecodable images are skipped and counted
  // coco: the COCO-format captions or instances file and the images' folder, both relative to `path`
  // (image_root empty: `path` itself); docs/TASKS.md
  std::string annotations, image_root;
  // text: tokens per window (one example); a model's context may not exceed it
  int64_t window = 0;
  // coco captions and text: how text becomes tokens (words, the default, or bytes), and the word
  // vocabulary's limits, built from the training split only
  datasets::TokenizerKind tokenizer{};
  int64_t min_count = 1;
  int64_t max_vocab = 10000;
  // idx and images: training-time augmentation, drawn from each unit's seed
  std::vector<Augment> augment;
  int crop_padding = 4;  // random_crop: pixels of zero padding on each side
  // Prepared partitions live in the shared content-addressed cache
  // (datasets/prepared_cache.hpp); false prepares into the run directory.
  bool cache = true;
  // A unit on a memory-mapped (out-of-core) partition gathers its next
  // batches on a background thread (datasets/batch_read_ahead.hpp). Off by
  // default: with one worker per core the extra thread competes with training
  // (docs/BENCHMARKS.md); on for partitions larger than RAM on a slow disk.
  bool read_ahead = false;
};

struct ClusterSpec {
  int workers = 0;  // 0 = one per core
  int threads_per_worker = 1;
  int max_unit_retries = 3;
  SchedulerKind scheduler = kDefaultScheduler;
  int replication = 0;  // copies of each partition across agents; 0 = min(2, agents)
  // Seconds an agent may go without a heartbeat before its units are
  // requeued elsewhere (a hung node); on a coordinator only.
  double heartbeat_timeout = 10;
  // Memory in MB for the partitions an embedded run's agent holds (0: no
  // limit); partitions beyond it are memory-mapped from disk (out of core).
  int64_t memory_mb = 0;
  // Memory in MB one worker may give a config's training state
  // (parameters, gradients, buffers, optimizer state; 0: no limit). A config
  // over it trains as a pipeline over as few stages as fit. Separate from
  // memory_mb (the partitions' budget), so runs that map their data with a
  // small memory_mb keep training their models whole.
  int64_t model_memory_mb = 0;
  // How configs may train (MOP only, data-parallel gangs, or the
  // cost model's choice) and the most workers in one gang (0: as many as
  // hold partitions; else 2 .. the workers holding partitions).
  Parallelism parallelism = Parallelism::automatic;
  int max_gang = 0;
};

struct ExperimentSpec {
  std::string name;  // default: the spec file's stem
  // Planned epochs of every config, >= 1. For asha and hyperband the parser
  // sets it to max_epochs (the key `epochs` is refused there), so it is always
  // the epochs a config trains unless the search procedure stops it earlier.
  int epochs = 3;
  uint64_t seed = 42;
  SearchKind search = SearchKind::grid;
  // The search-specific keys below are read and type-checked here; which
  // searches accept them, and their cross-checks, are the search registry's
  // (runtime/spec/search_registry.hpp).
  int samples = 0;  // random, asha: number of configs (required, >= 1)
  // What is learned: the labels' kind, the loss and the metrics (docs/SPEC.md, "Tasks").
  datasets::TaskKind task = datasets::TaskKind::classification;
  // The ranking metric: any metric the task computes (default: default_metric(task)), or a training
  // template's own metric, whose direction `metric_goal` gives.
  Metric metric = Metric::val_accuracy;
  int beam = 1;  // captioning: hypotheses per image when a validation or test decodes captions (1: greedy)
  // AutoML procedures (docs/SPEC.md, "Search procedures"); each key only with its searches.
  int max_epochs = 0;                        // asha, hyperband: R, the most epochs a config trains (required)
  int min_epochs = 1;                        // asha: r, the first rung, 1 .. max_epochs
  int eta = 3;                               // asha, hyperband: the reduction factor, >= 2
  int brackets = 0;                          // hyperband: how many brackets, 0 = all (s_max + 1)
  int population = 0;                        // pbt: number of configs (required, >= 2)
  int ready = 1;                             // pbt: epochs between exploit/explore steps, < epochs
  double exploit_fraction = 0.25;            // pbt: bottom fraction that copies the top fraction, (0, 0.5]
  std::vector<double> perturb = {0.8, 1.2};  // pbt: factors a perturbed hyper-parameter is multiplied by
  std::vector<std::string> perturb_keys;     // pbt: hyper-parameters to perturb; empty = every float range
  // tpe (docs/SEARCH.md): the model's options, how many configs are in
  // flight, and the optional pruner (BOHB-like: asha or hyperband rungs).
  int startup = 10;              // tpe: random configs before the model, >= 1
  int candidates = 24;           // tpe: draws from l(x) per hyper-parameter, >= 1
  double gamma = 0.1;            // tpe: the good set's fraction of the finished configs, (0, 1]
  double prior_weight = 1.0;     // tpe: the prior kernel's weight, > 0
  int in_flight = 0;             // tpe: configs training at once; 0 = [cluster] workers, else the partitions
  Pruner pruner = Pruner::none;  // tpe
  // Warm start (docs/SEARCH.md): earlier run directories, absolute; their
  // finished configs over the same [space] seed this search.
  std::vector<std::string> warm_start;
  // The same entries as written: on a coordinator an entry may name one of
  // its experiments by id (runtime/run/warm_start.hpp, resolve_warm_start_ids).
  std::vector<std::string> warm_start_as_written;
  bool from_checkpoint = false;  // a warm-started config starts from its earlier checkpoint
  // Several objectives (metric = [...], objective.hpp): empty for one metric.
  // `metric` is then the first task metric of the list (the run's ranking).
  std::vector<Objective> objectives;
  DataSpec data;
  ClusterSpec cluster;
  nlohmann::json space;  // object: key -> array of values, or a distribution object
  std::string spec_dir;  // absolute directory of the spec file ("" for strings)
  // Where relative input paths not found under spec_dir were looked for next: a coordinator's data roots
  // (docs/CLUSTER.md "Data roots"). Kept with the run, so a resume resolves the same files.
  std::vector<std::string> search_dirs;
  // The registered dataset `[data] dataset` names, as {name: its [data] keys} at parse time
  // (docs/SPEC.md "Registered datasets"); empty for a spec that names none. Kept with the run, so a
  // resume reads the same data even after the dataset is removed or registered again.
  nlohmann::json datasets = nlohmann::json::object();
  std::string source_text;  // the TOML text, kept so a run directory can store it
};

// Larger grids and populations are refused: they are almost always a typo,
// and every config becomes a training unit per partition per epoch.
constexpr int64_t kMaxConfigs = 100000;

// The [experiment] section as the per-search checks see it: whether a key was
// written, and problems reported at a key's position (the section's when the
// key is absent), sorted into file order with every other problem.
class ExperimentKeys {
 public:
  virtual ~ExperimentKeys() = default;
  virtual bool has(const std::string& key) const = 0;
  // "[experiment] <key> <text>"
  virtual void report(const std::string& key, const std::string& text) = 0;
  // "[experiment] <key> is required: <hint>", at the section
  virtual void missing(const std::string& key, const std::string& hint) = 0;
  // `message` as given (it names the key itself)
  virtual void report_message(const std::string& key, const std::string& message) = 0;
};

// The checks that belong to each search procedure: the search registry
// supplies them (runtime/spec/search_registry.hpp search_checks()), and
// parse_spec_file and parse_spec_string parse with them.
struct SearchChecks {
  // After [experiment] is read, when its search is valid. May derive fields
  // (asha and hyperband set epochs = max_epochs).
  std::function<void(ExperimentKeys&, ExperimentSpec&)> experiment;
  // Whether [space] may hold distributions for this search (every search but grid samples).
  std::function<bool(SearchKind)> samples_space;
  // After a clean [space].
  std::function<void(ExperimentKeys&, const ExperimentSpec&)> space;
};

// Reads and parses a spec file. Messages start with `path` as given, e.g.
// "fashion.toml:7:1: unknown key 'lrr' in [experiment]". Several problems are
// reported together, one per line, in file order. Every search's own checks
// are the search registry's (search_checks()).
Result<ExperimentSpec> parse_spec_file(const std::string& path);

// Parses TOML text. Relative data paths and .pt models are resolved against
// spec_dir (against the current directory when spec_dir is ""), or, when the
// file is not there, against the first of `search_dirs` that has it. `origin`
// prefixes messages (e.g. the file name); its stem is the default name when it
// ends in ".toml", otherwise the default name is "experiment". `datasets` are
// the registered datasets a `[data] dataset = "NAME"` may name, as
// {name: {its [data] keys}} (a coordinator's DatasetRegistry::tables()).
Result<ExperimentSpec> parse_spec_string(const std::string& toml_text, const std::string& spec_dir,
                                         const std::string& origin, const std::vector<std::string>& search_dirs = {},
                                         const nlohmann::json& datasets = nlohmann::json::object());

// The same with other search checks than the registry's (the parser's own
// tests give it checks that record what they are asked).
Result<ExperimentSpec> parse_spec_file_with(const std::string& path, const SearchChecks& checks);
Result<ExperimentSpec> parse_spec_string_with(const std::string& toml_text, const std::string& spec_dir,
                                              const std::string& origin, const SearchChecks& checks,
                                              const std::vector<std::string>& search_dirs = {},
                                              const nlohmann::json& datasets = nlohmann::json::object());

// A dataset to register (docs/SPEC.md "Registered datasets"): `table` holds [data] keys, checked as a
// spec's [data] is (problems start with `origin`); relative paths start at `dir`, then `search_dirs`.
// The answer is the table with every path absolute, ready for DatasetRegistry, and the [data] it reads
// as (for the data-roots check). A table may not itself name a dataset.
struct CheckedDataset {
  nlohmann::json table;
  DataSpec data;
};
Result<CheckedDataset> check_dataset_table(const nlohmann::json& table, const std::string& dir,
                                           const std::vector<std::string>& search_dirs, const std::string& origin);
// A dataset's name: 1 to 64 letters, digits, "-", "_" and "."; not starting with "." (it names a
// folder and a URL path part).
Status check_dataset_name(const std::string& name);

// Every field except source_text, for summary.json and the run directory.
// To rebuild a spec later, re-parse source_text with spec_dir.
nlohmann::json spec_to_json(const ExperimentSpec& spec);

// The normalization the ETL should apply: `normalization` with "auto" resolved
// ("global" for idx, "per_feature" for csv and registered sources).
datasets::NormalizationMode effective_normalization(const DataSpec& data);

// Accepted values of the enumerated keys (the first is the default where one exists).
std::vector<std::string> data_source_names();           // idx, csv, then registered sources
                                                        // (datasets/dataset_source.hpp)
const std::vector<std::string>& normalization_names();  // auto, none, global, per_feature
// The [experiment] keys that belong to some searches only, in declaration
// order; the search registry says which searches accept each.
const std::vector<std::string>& search_specific_keys();
// search_names() is in search_kind.hpp, scheduler_names() in scheduler_kind.hpp.

// True if a larger value of the metric named `metric` is better (val_accuracy,
// val_r2 ...), false for val_loss, val_mse ...; for a name read back from a
// stored record (a template's metric: metric_from_record with its goal).
bool metric_higher_is_better(const std::string& metric);

}  // namespace cerebro
