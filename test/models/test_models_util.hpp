#pragma once
// Helpers shared by the models tests: small synthetic datasets with learnable
// structure, a self-removing temporary directory and a one-call unit runner.

#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
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

// The validation of a config before and after training: from its initial state of seed 5, `units` units
// with the seeds first_seed, first_seed + 1, ... on p0 for an even seed, p1 for an odd one. The test stops
// when a unit fails or diverges.
struct Learned {
  Evaluation before, after;
};
inline Learned learn(const nlohmann::json& params, const Data& data, int units, uint64_t first_seed = 1) {
  auto state = initial_state(params, data.shape, data.p0, 5);
  BOOST_REQUIRE_MESSAGE(state.ok(), state.error());
  auto before = evaluate_state(params, data.shape, *state, data.validation);
  BOOST_REQUIRE_MESSAGE(before.ok(), before.error());
  std::string s = *state;
  for (uint64_t unit = first_seed; unit < first_seed + static_cast<uint64_t>(units); ++unit) {
    auto u = run_unit(params, data.shape, s, unit % 2 ? data.p1 : data.p0, unit);
    BOOST_REQUIRE_MESSAGE(u.ok(), u.error());
    BOOST_REQUIRE(!u->diverged);
    s = u->state;
  }
  auto after = evaluate_state(params, data.shape, s, data.validation);
  BOOST_REQUIRE_MESSAGE(after.ok(), after.error());
  return {*before, *after};
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

// Captioning examples: 3x8x8 images of one of four kinds (kind k lifts channel k % 3 by 1 + k / 3 over
// noise), each with two captions that name its kind, in the `captions` field as the ETL leaves it (every
// caption's ids, then eos): 4+k 10 11 13 14 and 12 4+k 15 13.
inline std::vector<int64_t> caption_a(int64_t kind) { return {4 + kind, 10, 11, 13, 14}; }
inline std::vector<int64_t> caption_b(int64_t kind) { return {12, 4 + kind, 15, 13}; }
inline datasets::Dataset captioned_images(int64_t n, uint64_t seed) {
  datasets::Dataset d;
  d.sample_shape = {3, 8, 8};
  datasets::RaggedField captions;
  captions.name = "captions";
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  d.features.resize(static_cast<size_t>(n * 192));
  for (int64_t i = 0; i < n; ++i) {
    const auto kind = static_cast<int64_t>(rng() % 4);
    for (int64_t j = 0; j < 192; ++j)
      d.features[static_cast<size_t>(i * 192 + j)] = noise(rng) + (j / 64 == kind % 3 ? 1.0f + kind / 3 : 0.0f);
    std::vector<int64_t> ids = caption_a(kind);
    ids.push_back(2);
    for (int64_t id : caption_b(kind)) ids.push_back(id);
    ids.push_back(2);
    captions.append_ints(ids.data(), static_cast<int64_t>(ids.size()));
  }
  d.fields.push_back(std::move(captions));
  return d;
}

inline Data make_caption_data(int64_t partition_size = 96) {
  Data d{captioned_images(partition_size, 1), captioned_images(partition_size, 2), captioned_images(64, 3), {}};
  d.shape = ShapeInfo{{3, 8, 8}, kTokenVocabulary};
  d.shape.task = datasets::TaskKind::captioning;
  return d;
}

// Detection examples: 3x16x16 images holding one or two squares (side 4 to 7 pixels, apart) of class k,
// drawn in channel k over noise, with their boxes and classes in the fields `boxes` and `box_labels`.
inline datasets::Dataset boxed_images(int64_t n, uint64_t seed) {
  datasets::Dataset d;
  d.sample_shape = {3, 16, 16};
  datasets::RaggedField boxes{"boxes", datasets::FieldType::float32, 4};
  datasets::RaggedField labels{"box_labels", datasets::FieldType::int64, 1};
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.1f);
  d.features.resize(static_cast<size_t>(n * 768));
  for (auto& v : d.features) v = noise(rng);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<float> box_values;
    std::vector<int64_t> classes;
    const int64_t objects = 1 + static_cast<int64_t>(rng() % 2);
    for (int64_t o = 0; o < objects; ++o) {
      const auto side = static_cast<int64_t>(4 + rng() % 4);
      // The first square in the left half, the second in the right: they never overlap.
      const auto x = static_cast<int64_t>(o * 8 + rng() % (9 - side)), y = static_cast<int64_t>(rng() % (17 - side));
      const auto kind = static_cast<int64_t>(rng() % 3);
      for (int64_t r = y; r < y + side; ++r)
        for (int64_t c = x; c < x + side; ++c)
          d.features[static_cast<size_t>(i * 768 + kind * 256 + r * 16 + c)] += 1.0f;
      box_values.insert(box_values.end(), {static_cast<float>(x), static_cast<float>(y), static_cast<float>(side),
                                           static_cast<float>(side)});
      classes.push_back(kind);
    }
    boxes.append_floats(box_values.data(), objects);
    labels.append_ints(classes.data(), objects);
  }
  d.fields.push_back(std::move(boxes));
  d.fields.push_back(std::move(labels));
  return d;
}

inline Data make_box_data(int64_t partition_size = 128) {
  Data d{boxed_images(partition_size, 1), boxed_images(partition_size, 2), boxed_images(64, 3), {}};
  d.shape = ShapeInfo{{3, 16, 16}, 3};
  d.shape.task = datasets::TaskKind::detection;
  return d;
}

}  // namespace cerebro::models::testing
