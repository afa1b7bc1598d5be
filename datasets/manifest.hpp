#pragma once
// manifest.json: what a prepared dataset directory holds (shards, their checksums, shapes, normalization),
// written last so its presence means the directory is complete.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/normalization.hpp"
#include "datasets/shard.hpp"
#include "datasets/task_kind.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

inline constexpr const char* kManifestFileName = "manifest.json";
inline constexpr int kManifestFormatVersion = 1;

struct Manifest {
  int format_version = kManifestFormatVersion;
  std::string source;               // a built-in source's name or a registered one
  std::vector<std::string> inputs;  // the source files read
  uint64_t seed = 0;
  int64_t train_examples = 0;  // in partitions (after the validation split)
  std::vector<int64_t> sample_shape;
  int64_t num_classes = 0;                   // classes; for regression and multilabel the target width
  std::vector<std::string> class_names;      // may be empty; regression: the target columns, multilabel: the labels
  TaskKind task = TaskKind::classification;  // absent in older manifests: classification
  // Regression: the training targets' mean and stddev per target; the shards hold (y - mean) / stddev
  // (stddev 0 -> 1), so a prediction is output * stddev + mean. Empty for the other tasks.
  std::vector<float> target_mean, target_stddev;
  std::vector<std::string> feature_names;  // csv: the feature columns in order (predict reads them); may be empty
  // images: whether images of another size were resized to sample_shape (predict does the same); absent in
  // manifests of other sources and of older builds (cache format < 3).
  bool images_resized = true;
  // Captioning and language modelling: the tokenizer the shards' tokens come from (datasets/tokenizer.hpp
  // Tokenizer::to_json), so predict and the REPL turn tokens back into text; null for the other tasks.
  // num_classes is then its vocabulary's size.
  nlohmann::json tokenizer;
  // Detection: the COCO category id of each class index (class_names holds their names), for results
  // files in COCO's ids; empty for the other tasks.
  std::vector<int64_t> category_ids;
  std::string normalization_mode;  // "none" | "global" | "per_feature"
  Normalization normalization;
  std::vector<ShardInfo> partitions;  // part-0000.bin ...
  ShardInfo validation;               // validation.bin
  ShardInfo test;                     // test.bin
};

// Writes dir/manifest.json atomically (tmp + fsync + rename).
Status write_manifest(const std::string& dir, const Manifest& m);

// Errors name the file and, for a bad document, the JSON error or the missing/mistyped key.
// Also checks consistency: known version, partition counts summing to train_examples, statistics sizes.
Result<Manifest> read_manifest(const std::string& dir);

}  // namespace cerebro::datasets
