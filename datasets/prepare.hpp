#pragma once
// The ETL: load a source dataset, split it, normalize it and write checksummed partition shards plus a
// manifest; and the reverse, loading a prepared directory with every checksum verified.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "datasets/coco.hpp"
#include "datasets/dataset.hpp"
#include "datasets/images.hpp"
#include "datasets/manifest.hpp"
#include "datasets/normalization.hpp"
#include "datasets/text_source.hpp"
#include "datasets/tokenizer.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

struct PrepareOptions {
  std::string source;  // "idx" | "csv" | "images" | "coco" | "text" | registered
  std::string train_images, train_labels, test_images, test_labels;  // idx
  std::string train_csv, test_csv, label_column;                     // csv; test_csv may be empty
  // What the labels are (datasets/task_kind.hpp). Regression may name several target columns in
  // label_columns (then label_column is ignored); csv only, or a registered source that returns targets.
  TaskKind task = TaskKind::classification;
  std::vector<std::string> label_columns;
  ImageOptions images;               // images; coco: how its images are decoded (images.path unused)
  CocoOptions coco;                  // coco: the folder, annotations file, image root and how its images are decoded
  TextSourceOptions text;            // text: the file or folder and the window (text.tokenizer is set from `tokenizer`)
  TokenizerOptions tokenizer;        // coco captions and text: built from the training split only
  double validation_fraction = 0.1;  // of the (limited) training set, in [0, 1)
  double test_fraction =
      0.1;             // csv without test_csv, images without test/: carved off BEFORE the validation split, in [0, 1)
  int partitions = 1;  // >= 1
  int64_t limit = 0;   // 0 = all; else only the first N training examples
  uint64_t seed = 42;
  NormalizationMode normalization = NormalizationMode::global;
};

// Load -> limit to the first N -> shuffle once (seeded) -> [csv without test_csv: test = the last
// round(test_fraction*n)] -> validation = the last round(validation_fraction*n) of what remains ->
// normalization statistics from the remaining TRAINING part only -> apply to train, validation and test ->
// split the training part into `partitions` contiguous chunks whose sizes differ by at most one -> write
// part-%04d.bin, validation.bin, test.bin and manifest.json.
// Everything is written into a temporary sibling directory that is renamed to out_dir at the end, so a
// failure (or an exception, e.g. from `progress`) leaves nothing behind. out_dir must not exist or be
// empty. `progress` (may be empty) receives short human lines.
// CSV string labels: train and test names are merged, sorted, and both files are remapped onto them.
// num_classes = 1 + the largest label seen in train or test (at least the number of class names).
// Regression and multilabel: num_classes is the target width; multilabel label names of train and test
// are merged like class names; regression targets are standardized with the training part's statistics
// (Manifest::target_mean, target_stddev).
Result<Manifest> prepare(const PrepareOptions& options, const std::string& out_dir,
                         const std::function<void(const std::string&)>& progress = {});

struct PreparedData {
  Manifest manifest;
  std::vector<std::shared_ptr<const Dataset>> partitions;
  std::shared_ptr<const Dataset> validation, test;
};

// Where a loaded shard's features live: copied into memory, or left in the file and memory-mapped (out of
// core: file-backed pages the kernel reads on demand and may drop, no anonymous memory).
enum class ShardStorage { in_memory, mapped };

// Reads the manifest and every shard, verifying each checksum, count, shape and label range
// (errors name the shard).
Result<PreparedData> load_prepared(const std::string& dir, ShardStorage storage = ShardStorage::in_memory);

// Reads one shard of a prepared directory, checked against its manifest entry (what a worker does for the
// partitions it holds).
Result<Dataset> load_shard(const std::string& dir, const Manifest& manifest, const ShardInfo& shard,
                           ShardStorage storage = ShardStorage::in_memory);

// Verifies every file of a prepared directory against its manifest (checksums, through a mapping, no
// copy); the error names the first damaged file.
Status verify_prepared(const std::string& dir);

}  // namespace cerebro::datasets
