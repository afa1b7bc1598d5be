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

void RaggedField::append_ints(const int64_t* values, int64_t item_count) {
  if (type != FieldType::int64) contract_violation("RaggedField::append_ints", name + " is not an int64 field");
  ints.insert(ints.end(), values, values + item_count * width);
  offsets.push_back(offsets.back() + item_count);
}

void RaggedField::append_floats(const float* values, int64_t item_count) {
  if (type != FieldType::float32) contract_violation("RaggedField::append_floats", name + " is not a float field");
  floats.insert(floats.end(), values, values + item_count * width);
  offsets.push_back(offsets.back() + item_count);
}

void RaggedField::append_texts(std::vector<std::string> values) {
  if (type != FieldType::text) contract_violation("RaggedField::append_texts", name + " is not a text field");
  const auto count = static_cast<int64_t>(values.size());
  for (auto& v : values) texts.push_back(std::move(v));
  offsets.push_back(offsets.back() + count);
}

const RaggedField* Dataset::field(const std::string& name) const {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

RaggedField* Dataset::field(const std::string& name) {
  for (auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

namespace {

// Copies example `src`'s items of `from` onto the end of `to` (same name, type and width).
void append_example(const RaggedField& from, int64_t src, RaggedField& to) {
  const int64_t begin = from.offsets[static_cast<size_t>(src)], count = from.items_of(src);
  const auto first = static_cast<size_t>(begin * from.width), n = static_cast<size_t>(count * from.width);
  switch (from.type) {
    case FieldType::int64:
      to.ints.insert(to.ints.end(), from.ints.begin() + static_cast<std::ptrdiff_t>(first),
                     from.ints.begin() + static_cast<std::ptrdiff_t>(first + n));
      break;
    case FieldType::float32:
      to.floats.insert(to.floats.end(), from.floats.begin() + static_cast<std::ptrdiff_t>(first),
                       from.floats.begin() + static_cast<std::ptrdiff_t>(first + n));
      break;
    case FieldType::text:
      to.texts.insert(to.texts.end(), from.texts.begin() + static_cast<std::ptrdiff_t>(begin),
                      from.texts.begin() + static_cast<std::ptrdiff_t>(begin + count));
      break;
  }
  to.offsets.push_back(to.offsets.back() + count);
}

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
  const bool has_labels = !from.labels.empty();
  if (from.has_targets()) {
    out.targets.resize(count * width);
  } else if (has_labels) {
    out.labels.resize(count);
  }
  for (const auto& f : from.fields) {
    RaggedField copy;
    copy.name = f.name;
    copy.type = f.type;
    copy.width = f.width;
    out.fields.push_back(std::move(copy));
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
    } else if (has_labels) {
      out.labels[row] = from.labels[static_cast<size_t>(src)];
    }
    for (size_t k = 0; k < from.fields.size(); ++k) append_example(from.fields[k], src, out.fields[k]);
  }
  return out;
}

}  // namespace cerebro::datasets
