#pragma once
// Feature standardization: x = (x - mean) / stddev, with statistics taken from the training part only so
// that nothing about validation or test examples leaks into training.

#include <string>
#include <vector>

#include "datasets/dataset.hpp"
#include "runtime/base/status.hpp"

namespace cerebro::datasets {

enum class NormalizationMode { none, global, per_feature };

// "none" | "global" | "per_feature"
Result<NormalizationMode> parse_normalization_mode(const std::string& text);
std::string to_string(NormalizationMode mode);

// Size 1: one scalar for all features; otherwise one entry per feature (sample_numel()).
struct Normalization {
  std::vector<float> mean, stddev;
};

// none -> {0},{1}. global: mean and population stddev over every feature value. per_feature: per column.
// A constant feature keeps stddev 0 here (the honest statistic); apply_normalization divides by 1 instead.
// An empty dataset gives {0},{1} (or zeros/ones per feature).
Normalization compute_normalization(const Dataset& train, NormalizationMode mode);

// x = (x - mean) / stddev, stddev 0 -> 1. invalid_argument (and `data` unchanged) when the statistics
// have neither 1 nor sample_numel() entries: they belong to another dataset (e.g. a model's info applied
// to a file of other examples).
[[nodiscard]] Status apply_normalization(Dataset& data, const Normalization& n);

}  // namespace cerebro::datasets
