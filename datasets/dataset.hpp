#pragma once
// An in-memory labelled dataset: dense float features plus one class index per example, or (regression,
// multilabel) a row of float targets per example. Every loader (IDX, CSV, shards) produces this, and the
// ETL works on it.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cerebro::datasets {

// What one item of a ragged field holds.
enum class FieldType { int64, float32, text };

// A named field of variable length per example (structured examples, docs/TASKS.md): example i owns items
// [offsets[i], offsets[i+1]), each `width` values of the vector its type names. Captions, an image's boxes
// and their classes, a window of tokens. Text items (a caption before it is tokenized) have width 1.
struct RaggedField {
  std::string name;
  FieldType type = FieldType::int64;
  int64_t width = 1;                // values per item (4 for a box)
  std::vector<int64_t> offsets{0};  // examples + 1 entries, from 0, non-decreasing
  std::vector<int64_t> ints;        // int64: items * width values
  std::vector<float> floats;        // float32: items * width values
  std::vector<std::string> texts;   // text: one per item

  int64_t examples() const { return static_cast<int64_t>(offsets.size()) - 1; }
  int64_t items() const { return offsets.empty() ? 0 : offsets.back(); }
  int64_t items_of(int64_t example) const {
    return offsets[static_cast<size_t>(example) + 1] - offsets[static_cast<size_t>(example)];
  }
  // Appends one example's items (values: items * width of this field's type).
  void append_ints(const int64_t* values, int64_t item_count);
  void append_floats(const float* values, int64_t item_count);
  void append_texts(std::vector<std::string> values);
};

struct Dataset {
  std::vector<int64_t> sample_shape;  // {1,28,28} for IDX images; {F} for CSV
  std::vector<float> features;        // row-major, size() * sample_numel() floats (empty when mapped)
  std::vector<int64_t> labels;        // class index per example, in [0, num_classes); empty with targets
  // Regression and multilabel: target_width floats per example, row-major (regression values, or 0/1 per
  // label); 0 = class labels.
  int64_t target_width = 0;
  std::vector<float> targets;
  // Out of core (datasets/shard.hpp map_shard): the features stay in a read-only memory-mapped shard file
  // owned by `feature_storage`, read through the page cache, so they take no anonymous memory; `features`
  // is then empty and `mapped_features` points into the mapping. Readers use feature_data().
  std::shared_ptr<const void> feature_storage;
  const float* mapped_features = nullptr;
  // Structured examples (captions, boxes, token windows): their variable-length parts, each with one entry
  // per example. A dataset with fields and neither labels nor targets counts its examples by them.
  std::vector<RaggedField> fields;

  bool has_targets() const { return target_width > 0; }
  int64_t size() const {
    if (has_targets()) return static_cast<int64_t>(targets.size()) / target_width;
    if (labels.empty() && !fields.empty()) return fields.front().examples();
    return static_cast<int64_t>(labels.size());
  }
  // The field named `name`, or nullptr.
  const RaggedField* field(const std::string& name) const;
  RaggedField* field(const std::string& name);
  const float* feature_data() const { return mapped_features ? mapped_features : features.data(); }
  bool is_mapped() const { return mapped_features != nullptr; }
  // Product of sample_shape; 0 for a Dataset without a shape.
  int64_t sample_numel() const;
};

// A permutation of 0..n-1. Deterministic on every platform: our own Fisher-Yates over std::mt19937_64
// with our own bounded draw (std::shuffle and std::uniform_int_distribution are implementation-defined).
std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed);

// Copies rows idx[begin, end) of `from` into a new Dataset with the same sample_shape.
// A bad range or an index outside `from` is a contract violation (the callers draw the indices).
Dataset gather(const Dataset& from, const std::vector<int64_t>& idx, int64_t begin, int64_t end);

}  // namespace cerebro::datasets
