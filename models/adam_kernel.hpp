#pragma once
// The Adam and AdamW update of one parameter tensor in one pass over its
// floats, with no LibTorch (models/fused_adam.hpp drives it).
//
// Why: LibTorch 1.13's Adam takes seven tensor operations and two temporary
// tensors per parameter; on the zoo cnn (215,000 floats) that was 1.7 ms a
// step against 0.27 ms for this loop (docs/BENCHMARKS.md, "The training path"),
// 5 % of a MOP step at batch 64 and more of a gang's, whose ranks take the
// same optimizer step on half the examples.
//
// The arithmetic is LibTorch's, in float, per element:
//   g  = grad (+ weight_decay * param for Adam's L2 term)
//   m  = m * beta1 + (1 - beta1) * g
//   v  = v * beta2 + (1 - beta2) * g * g
//   param = param * decay   (AdamW's decoupled weight decay, 1 - lr * wd)
//   param = param + (-step_size) * (m / (sqrt(v) / sqrt(bias_correction2) + eps))
// It is compiled without contracted multiply-adds and for the baseline
// instruction set, so every x86-64 machine of a cluster computes the same
// bits (LibTorch's kernels pick AVX2 or AVX-512 per machine, and may differ
// from these in the last bit).

#include <cstdint>

namespace cerebro::models {

struct AdamCoefficients {
  float beta1 = 0.9f, beta2 = 0.999f;
  float one_minus_beta1 = 0.1f, one_minus_beta2 = 0.001f;
  float sqrt_bias_correction2 = 1;  // sqrt(1 - beta2^step)
  float eps = 1e-8f;
  float negative_step_size = -1e-3f;  // -lr / (1 - beta1^step)
  float l2 = 0;                       // Adam's weight_decay, added to the gradient
  float decay = 1;                    // AdamW's 1 - lr * weight_decay, applied to the parameter first
};

// The coefficients of step `step` (1 for the first) of Adam (decoupled =
// false: weight_decay is an L2 term) or AdamW (decoupled = true).
AdamCoefficients adam_coefficients(double lr, double beta1, double beta2, double eps, double weight_decay,
                                   bool decoupled, int64_t step);

// Updates n floats of param, exp_avg and exp_avg_sq from grad. The arrays
// must not overlap.
void adam_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                 const AdamCoefficients& c);

}  // namespace cerebro::models
