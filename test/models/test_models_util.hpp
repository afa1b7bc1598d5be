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

}  // namespace cerebro::models::testing
