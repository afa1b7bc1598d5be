#pragma once
// Helpers shared by the models tests: small synthetic datasets with learnable
// structure, a self-removing temporary directory and a one-call unit runner.

#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/dataset.hpp"
#include "models/unit_trainer.hpp"
#include "test/support/temp_dir.hpp"

namespace cerebro::models::testing {

using cerebro::testing::TempDir;

constexpr int64_t kClasses = 10;

// `n` examples of `sample_shape`: each class has a fixed random prototype
// (the same for every call with the same shape) and an example is its class
// prototype plus noise, so a model can learn the classes but not perfectly.
inline datasets::Dataset synthetic(const std::vector<int64_t>& sample_shape, int64_t n, uint64_t seed,
                                   float scale = 1.0f) {
  datasets::Dataset d;
  d.sample_shape = sample_shape;
  const int64_t numel = d.sample_numel();
  std::mt19937_64 prototype_rng(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> prototypes(static_cast<size_t>(kClasses * numel));
  for (auto& v : prototypes) v = normal(prototype_rng);
  std::mt19937_64 rng(seed);
  d.labels.resize(static_cast<size_t>(n));
  d.features.resize(static_cast<size_t>(n * numel));
  for (int64_t i = 0; i < n; ++i) {
    auto label = static_cast<int64_t>(rng() % kClasses);
    d.labels[static_cast<size_t>(i)] = label;
    for (int64_t j = 0; j < numel; ++j)
      d.features[static_cast<size_t>(i * numel + j)] =
          scale * (prototypes[static_cast<size_t>(label * numel + j)] + 0.8f * normal(rng));
  }
  return d;
}

inline ShapeInfo shape_of(const datasets::Dataset& d) { return ShapeInfo{d.sample_shape, kClasses}; }

// Two training partitions and a validation set drawn from the same classes.
struct Data {
  datasets::Dataset p0, p1, validation;
  ShapeInfo shape;
};

inline Data make_data(const std::vector<int64_t>& sample_shape, int64_t partition_size = 128) {
  Data d{synthetic(sample_shape, partition_size, 1),
         synthetic(sample_shape, partition_size, 2),
         synthetic(sample_shape, 200, 3),
         {}};
  d.shape = shape_of(d.p0);
  return d;
}

// A unit's input: it points at its arguments, which must outlive it.
inline UnitInput unit_input(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state,
                            const datasets::Dataset& partition, uint64_t seed,
                            const datasets::Dataset* validation = nullptr) {
  UnitInput in;
  in.params = &params;
  in.shape = shape;
  in.state = &state;
  in.partition = &partition;
  in.validation = validation;
  in.seed = seed;
  return in;
}

inline Result<UnitOutput> run_unit(const nlohmann::json& params, const ShapeInfo& shape, const std::string& state,
                                   const datasets::Dataset& partition, uint64_t seed,
                                   const datasets::Dataset* validation = nullptr) {
  return train_unit(unit_input(params, shape, state, partition, seed, validation));
}

// Language-model windows of `window` token ids over a vocabulary of 16 (0 .. 3 the tokenizer's specials):
// each window starts at a random id of 4 .. 15 and every next id follows from the one before
// (4 + (3 (id - 4) + 1) mod 12), so a model can learn to predict them; every fourth window ends early
// and is padded with 0. The `lengths` field counts each window's real tokens.
constexpr int64_t kTokenVocabulary = 16;
inline datasets::Dataset token_windows(int64_t n, int64_t window, uint64_t seed) {
  datasets::Dataset d;
  d.sample_shape = {window};
  datasets::RaggedField lengths;
  lengths.name = "lengths";
  std::mt19937_64 rng(seed);
  d.features.assign(static_cast<size_t>(n * window), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t length = i % 4 == 3 ? window / 2 + 1 : window;
    auto id = static_cast<int64_t>(4 + rng() % 12);
    for (int64_t t = 0; t < length; ++t) {
      d.features[static_cast<size_t>(i * window + t)] = static_cast<float>(id);
      id = 4 + (3 * (id - 4) + 1) % 12;
    }
    lengths.append_ints(&length, 1);
  }
  d.fields.push_back(std::move(lengths));
  return d;
}

inline Data make_token_data(int64_t window = 12, int64_t partition_size = 96) {
  Data d{token_windows(partition_size, window, 1),
         token_windows(partition_size, window, 2),
         token_windows(64, window, 3),
         {}};
  d.shape = ShapeInfo{{window}, kTokenVocabulary};
  d.shape.task = datasets::TaskKind::language_model;
  return d;
}

}  // namespace cerebro::models::testing
