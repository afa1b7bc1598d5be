#include "datasets/dataset.hpp"

#include <cstring>
#include <random>
#include <string>

#include "runtime/base/contract.hpp"

namespace cerebro::datasets {

int64_t Dataset::sample_numel() const {
  if (sample_shape.empty()) return 0;
  int64_t numel = 1;
  for (int64_t dim : sample_shape) numel *= dim;
  return numel;
}

namespace {

// Uniform draw in [0, bound) without modulo bias: reject the few raw values below 2^64 mod bound.
uint64_t bounded_draw(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const uint64_t raw = rng();
    if (raw >= threshold) return raw % bound;
  }
}

}  // namespace

std::vector<int64_t> shuffled_indices(int64_t n, uint64_t seed) {
  std::vector<int64_t> idx(n > 0 ? static_cast<size_t>(n) : 0);
  for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = i;
  std::mt19937_64 rng(seed);
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(bounded_draw(rng, static_cast<uint64_t>(i) + 1));
    std::swap(idx[static_cast<size_t>(i)], idx[static_cast<size_t>(j)]);
  }
  return idx;
}

Dataset gather(const Dataset& from, const std::vector<int64_t>& idx, int64_t begin, int64_t end) {
  if (begin < 0 || end < begin || end > static_cast<int64_t>(idx.size())) {
    contract_violation("gather", "range [" + std::to_string(begin) + ", " + std::to_string(end) + ") is outside the " +
                                     std::to_string(idx.size()) + " indices");
  }
  Dataset out;
  out.sample_shape = from.sample_shape;
  const auto numel = static_cast<size_t>(from.sample_numel());
  const auto count = static_cast<size_t>(end - begin);
  out.features.resize(count * numel);
  out.target_width = from.target_width;
  const auto width = static_cast<size_t>(from.target_width);
  if (from.has_targets()) {
    out.targets.resize(count * width);
  } else {
    out.labels.resize(count);
  }
  for (size_t row = 0; row < count; ++row) {
    const int64_t src = idx[static_cast<size_t>(begin) + row];
    if (src < 0 || src >= from.size()) {
      contract_violation("gather", "index " + std::to_string(src) + " is outside a dataset of " +
                                       std::to_string(from.size()) + " examples");
    }
    std::memcpy(out.features.data() + row * numel, from.feature_data() + static_cast<size_t>(src) * numel,
                numel * sizeof(float));
    if (from.has_targets()) {
      std::memcpy(out.targets.data() + row * width, from.targets.data() + static_cast<size_t>(src) * width,
                  width * sizeof(float));
    } else {
      out.labels[row] = from.labels[static_cast<size_t>(src)];
    }
  }
  return out;
}

}  // namespace cerebro::datasets
