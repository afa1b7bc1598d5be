#pragma once
// Synthetic data for the embedding tests: separable classes, so a few epochs
// of a small model are well above chance.

#include <cstdint>
#include <random>

#include "datasets/dataset.hpp"

namespace cerebro::testing {

// n examples of `features` floats; class c has its mean at +3 on feature c.
inline datasets::Dataset separable_dataset(int64_t n, int64_t features, int64_t classes, uint64_t seed) {
  datasets::Dataset d;
  d.sample_shape = {features};
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    int64_t label = i % classes;
    for (int64_t f = 0; f < features; ++f) d.features.push_back(noise(rng) + (f == label ? 3.0f : 0.0f));
    d.labels.push_back(label);
  }
  return d;
}

}  // namespace cerebro::testing
