// models/pool_kernel.hpp's loops, four windows at a time in GCC's portable
// vector types (the zoo's rows are 14 and 7 outputs wide: a compiler's own
// vectorisation leaves a tail it runs with a branch per comparison, which
// was as slow as LibTorch). A row's last windows, fewer than four, go
// through the same vector code from a padded copy. Compiled at -O3
// (models/CMakeLists.txt).
#include "models/pool_kernel.hpp"

#include <algorithm>
#include <cstring>

namespace cerebro::models {

namespace {

typedef float Floats __attribute__((vector_size(16)));
typedef int32_t Ints __attribute__((vector_size(16)));

Floats load(const float* p) {
  Floats v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store(float* p, Floats v) { std::memcpy(p, &v, sizeof v); }

const Ints kEven = {0, 2, 4, 6}, kOdd = {1, 3, 5, 7};

// Four windows' winners by LibTorch's rule (greater or NaN wins) in its order
// (top left, top right, bottom left, bottom right): the running maximum
// takes each value in turn where it wins, with selects rather than branches.
struct Winners {
  Floats value;
  Ints place;
};

Winners winners_of(const float* top, const float* bottom) {
  const Floats t0 = load(top), t1 = load(top + 4), b0 = load(bottom), b1 = load(bottom + 4);
  const Floats candidates[3] = {__builtin_shuffle(t0, t1, kOdd), __builtin_shuffle(b0, b1, kEven),
                                __builtin_shuffle(b0, b1, kOdd)};
  Winners w{__builtin_shuffle(t0, t1, kEven), Ints{0, 0, 0, 0}};
  for (int k = 0; k < 3; ++k) {
    const Floats v = candidates[k];
    const Ints take = (v > w.value) | (v != v);
    w.value = take ? v : w.value;
    w.place = take ? Ints{k + 1, k + 1, k + 1, k + 1} : w.place;
  }
  return w;
}

// One output row: `n` windows over the input rows `top` and `bottom`.
template <bool kWhere>
void pool_row(const float* top, const float* bottom, int64_t n, float* out, uint8_t* where) {
  int64_t x = 0;
  for (; x + 4 <= n; x += 4) {
    const Winners w = winners_of(top + 2 * x, bottom + 2 * x);
    store(out + x, w.value);
    if constexpr (kWhere)
      for (int i = 0; i < 4; ++i) where[x + i] = static_cast<uint8_t>(w.place[i]);
  }
  if (x == n) return;
  float top_tail[8] = {}, bottom_tail[8] = {};
  const int64_t rest = n - x;
  std::copy(top + 2 * x, top + 2 * n, top_tail);
  std::copy(bottom + 2 * x, bottom + 2 * n, bottom_tail);
  const Winners w = winners_of(top_tail, bottom_tail);
  for (int64_t i = 0; i < rest; ++i) {
    out[x + i] = w.value[i];
    if constexpr (kWhere) where[x + i] = static_cast<uint8_t>(w.place[i]);
  }
}

template <bool kWhere>
void pool(const float* in, int64_t planes, int64_t height, int64_t width, float* out, uint8_t* where) {
  const int64_t out_h = height / 2, out_w = width / 2;
  for (int64_t p = 0; p < planes; ++p) {
    const float* plane = in + p * height * width;
    for (int64_t oy = 0; oy < out_h; ++oy) {
      const int64_t at = (p * out_h + oy) * out_w;
      const float* top = plane + 2 * oy * width;
      pool_row<kWhere>(top, top + width, out_w, out + at, kWhere ? where + at : nullptr);
    }
  }
}

// One output row's gradient into its two input rows: each window's four
// places take the gradient where the winner was, zero elsewhere.
void unpool_row(const float* grad, const uint8_t* where, int64_t n, float* top, float* bottom) {
  const Floats zero = {0, 0, 0, 0};
  for (int64_t x = 0; x < n; x += 4) {
    const int64_t count = std::min<int64_t>(4, n - x);
    Floats g = zero;
    Ints place = {-1, -1, -1, -1};
    if (count == 4) {
      g = load(grad + x);
      place = Ints{where[x], where[x + 1], where[x + 2], where[x + 3]};
    } else {
      for (int64_t i = 0; i < count; ++i) {
        g[i] = grad[x + i];
        place[i] = where[x + i];
      }
    }
    const Ints k0 = {0, 0, 0, 0}, k1 = {1, 1, 1, 1}, k2 = {2, 2, 2, 2}, k3 = {3, 3, 3, 3};
    const Floats s0 = place == k0 ? g : zero, s1 = place == k1 ? g : zero;
    const Floats s2 = place == k2 ? g : zero, s3 = place == k3 ? g : zero;
    const Ints low = {0, 4, 1, 5}, high = {2, 6, 3, 7};
    float top_out[8], bottom_out[8];
    store(top_out, __builtin_shuffle(s0, s1, low));
    store(top_out + 4, __builtin_shuffle(s0, s1, high));
    store(bottom_out, __builtin_shuffle(s2, s3, low));
    store(bottom_out + 4, __builtin_shuffle(s2, s3, high));
    if (count == 4) {
      std::memcpy(top + 2 * x, top_out, sizeof top_out);
      std::memcpy(bottom + 2 * x, bottom_out, sizeof bottom_out);
    } else {
      std::copy(top_out, top_out + 2 * count, top + 2 * x);
      std::copy(bottom_out, bottom_out + 2 * count, bottom + 2 * x);
    }
  }
}

}  // namespace

void max_pool2x2_forward(const float* in, int64_t planes, int64_t height, int64_t width, float* out, uint8_t* where) {
  pool<true>(in, planes, height, width, out, where);
}

void max_pool2x2_values(const float* in, int64_t planes, int64_t height, int64_t width, float* out) {
  pool<false>(in, planes, height, width, out, nullptr);
}

void max_pool2x2_backward(const float* grad_out, const uint8_t* where, int64_t planes, int64_t height, int64_t width,
                          float* grad_in) {
  const int64_t out_h = height / 2, out_w = width / 2;
  for (int64_t p = 0; p < planes; ++p) {
    float* plane = grad_in + p * height * width;
    for (int64_t oy = 0; oy < out_h; ++oy) {
      float* top = plane + 2 * oy * width;
      float* bottom = top + width;
      const int64_t at = (p * out_h + oy) * out_w;
      unpool_row(grad_out + at, where + at, out_w, top, bottom);
      if (width % 2) top[width - 1] = bottom[width - 1] = 0.0f;
    }
    if (height % 2) std::fill(plane + (height - 1) * width, plane + height * width, 0.0f);
  }
}

}  // namespace cerebro::models
