#pragma once
// A 2x2 max-pool with stride 2 (floor mode, no padding) over planes of
// floats, forward and backward, with no LibTorch (models/max_pool.hpp drives
// it).
//
// Why: LibTorch 1.13's channels-first max-pool branches on every comparison
// (`val > max || isnan(val)`), and on activations that branch is
// unpredictable: 17 ns an output, a quarter of the zoo cnn's CPU samples
// under MOP (docs/BENCHMARKS.md, "The training path"). These loops select without
// branching and keep the winner's place in the window as one byte, where
// LibTorch keeps an int64 index.
//
// They give LibTorch's results: a value wins over the window's maximum so far
// if it is greater or NaN (the first of equal values, the last NaN), the
// output is the winner and the gradient goes to the winner alone. One
// difference: in a window of -inf only LibTorch picks no winner (its index
// stays -1); these loops pick the first. Activations after relu are never
// -inf.

#include <cstdint>

namespace cerebro::models {

// `planes` planes of height x width floats, one after another; `out` holds
// planes of (height / 2) x (width / 2), `where` one byte per output: the
// winner's place in its window (0 top left, 1 top right, 2 bottom left,
// 3 bottom right).
void max_pool2x2_forward(const float* in, int64_t planes, int64_t height, int64_t width, float* out, uint8_t* where);
// The same without `where` (no gradient wanted).
void max_pool2x2_values(const float* in, int64_t planes, int64_t height, int64_t width, float* out);
// The input's gradient: each output's gradient at its winner's place, zero
// elsewhere (also in a trailing odd row or column, which no window covers).
void max_pool2x2_backward(const float* grad_out, const uint8_t* where, int64_t planes, int64_t height, int64_t width,
                          float* grad_in);

}  // namespace cerebro::models
