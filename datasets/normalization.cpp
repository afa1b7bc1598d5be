#include "datasets/normalization.hpp"

#include <algorithm>
#include <cmath>
#include <array>
#include <utility>

#include "runtime/base/enum_names.hpp"

namespace cerebro::datasets {

namespace {
constexpr std::array<EnumName<NormalizationMode>, 3> kNormalizationModeNames = {
    {{NormalizationMode::none, "none"},
     {NormalizationMode::global, "global"},
     {NormalizationMode::per_feature, "per_feature"}}};
}  // namespace

Result<NormalizationMode> parse_normalization_mode(const std::string& text) {
  if (auto mode = enum_named<NormalizationMode>(kNormalizationModeNames, text)) return *mode;
  return Status::invalid_argument("unknown normalization mode '" + text + "', expected " +
                                  enum_alternatives(kNormalizationModeNames));
}

std::string to_string(NormalizationMode mode) { return enum_name(kNormalizationModeNames, mode); }

Normalization compute_normalization(const Dataset& train, NormalizationMode mode) {
  if (mode == NormalizationMode::none) return {{0.0f}, {1.0f}};
  // Two passes in double: the textbook one-pass formula loses precision on millions of values.
  const size_t columns = mode == NormalizationMode::global ? 1 : static_cast<size_t>(train.sample_numel());
  const size_t numel = static_cast<size_t>(train.sample_numel());
  const size_t rows = static_cast<size_t>(train.size());
  std::vector<double> sum(columns, 0.0), squares(columns, 0.0);
  const double per_column = mode == NormalizationMode::global ? double(rows) * double(numel) : double(rows);
  Normalization out;
  if (rows == 0 || numel == 0) {
    out.mean.assign(std::max<size_t>(columns, 1), 0.0f);
    out.stddev.assign(std::max<size_t>(columns, 1), 1.0f);
    return out;
  }
  const float* x = train.features.data();
  for (size_t r = 0; r < rows; ++r) {
    for (size_t f = 0; f < numel; ++f) sum[columns == 1 ? 0 : f] += x[r * numel + f];
  }
  std::vector<double> mean(columns);
  for (size_t c = 0; c < columns; ++c) mean[c] = sum[c] / per_column;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t f = 0; f < numel; ++f) {
      const size_t c = columns == 1 ? 0 : f;
      const double d = x[r * numel + f] - mean[c];
      squares[c] += d * d;
    }
  }
  for (size_t c = 0; c < columns; ++c) {
    out.mean.push_back(static_cast<float>(mean[c]));
    out.stddev.push_back(static_cast<float>(std::sqrt(squares[c] / per_column)));
  }
  return out;
}

Status apply_normalization(Dataset& data, const Normalization& n) {
  const size_t numel = static_cast<size_t>(data.sample_numel());
  if (n.mean.size() != n.stddev.size() || (n.mean.size() != 1 && n.mean.size() != numel)) {
    return Status::invalid_argument("apply_normalization: " + std::to_string(n.mean.size()) + " means and " +
                                    std::to_string(n.stddev.size()) + " stddevs for samples of " +
                                    std::to_string(numel) + " features");
  }
  std::vector<float> mean(numel), stddev(numel);
  for (size_t f = 0; f < numel; ++f) {
    const size_t c = n.mean.size() == 1 ? 0 : f;
    mean[f] = n.mean[c];
    stddev[f] = n.stddev[c] == 0.0f ? 1.0f : n.stddev[c];
  }
  float* x = data.features.data();
  const size_t rows = numel == 0 ? 0 : data.features.size() / numel;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t f = 0; f < numel; ++f) x[r * numel + f] = (x[r * numel + f] - mean[f]) / stddev[f];
  }
  return Status::ok_status();
}

}  // namespace cerebro::datasets
