// models/adam_kernel.hpp's loop. Built with -O3 -fno-math-errno (so that the
// loop, sqrt included, is vectorized) and -ffp-contract=off (no fused
// multiply-adds: the same bits on every machine); models/CMakeLists.txt.
#include "models/adam_kernel.hpp"

#include <cmath>

namespace cerebro::models {

AdamCoefficients adam_coefficients(double lr, double beta1, double beta2, double eps, double weight_decay,
                                   bool decoupled, int64_t step) {
  // As LibTorch computes them: in double, then used as float scalars.
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(step));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(step));
  AdamCoefficients c;
  c.beta1 = static_cast<float>(beta1);
  c.beta2 = static_cast<float>(beta2);
  c.one_minus_beta1 = static_cast<float>(1 - beta1);
  c.one_minus_beta2 = static_cast<float>(1 - beta2);
  c.sqrt_bias_correction2 = static_cast<float>(std::sqrt(bias_correction2));
  c.eps = static_cast<float>(eps);
  c.negative_step_size = static_cast<float>(-(lr / bias_correction1));
  if (decoupled) {
    c.decay = static_cast<float>(1 - lr * weight_decay);
  } else {
    c.l2 = static_cast<float>(weight_decay);
  }
  return c;
}

namespace {

// Separate loops for the terms that are off (the common case): `g + 0 * p`
// would turn an infinite parameter's gradient into NaN, where LibTorch skips
// the term.
template <bool kL2, bool kDecay>
void update(float* __restrict param, const float* __restrict grad, float* __restrict exp_avg,
            float* __restrict exp_avg_sq, int64_t n, const AdamCoefficients c) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = kL2 ? grad[i] + c.l2 * param[i] : grad[i];
    const float p = kDecay ? param[i] * c.decay : param[i];
    const float m = exp_avg[i] * c.beta1 + c.one_minus_beta1 * g;
    const float v = exp_avg_sq[i] * c.beta2 + c.one_minus_beta2 * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    param[i] = p + c.negative_step_size * (m / (std::sqrt(v) / c.sqrt_bias_correction2 + c.eps));
  }
}

}  // namespace

void adam_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n,
                 const AdamCoefficients& c) {
  const bool l2 = c.l2 != 0, decay = c.decay != 1;
  if (l2 && decay) {
    update<true, true>(param, grad, exp_avg, exp_avg_sq, n, c);
  } else if (l2) {
    update<true, false>(param, grad, exp_avg, exp_avg_sq, n, c);
  } else if (decay) {
    update<false, true>(param, grad, exp_avg, exp_avg_sq, n, c);
  } else {
    update<false, false>(param, grad, exp_avg, exp_avg_sq, n, c);
  }
}

}  // namespace cerebro::models
