// FusedAdam and FusedAdamW (models/fused_adam.hpp): LibTorch's parameter
// loop and state handling, with models/adam_kernel.hpp's update.
#include "models/fused_adam.hpp"

#include <ATen/Parallel.h>

#include <memory>
#include <tuple>

#include "models/adam_kernel.hpp"

namespace cerebro::models {

namespace {

// Floats a thread of an intra-op parallel step takes at least (a worker with
// threads_per_worker > 1 splits a large parameter's update).
constexpr int64_t kGrainFloats = 1 << 15;

bool contiguous_floats(const torch::Tensor& t, int64_t numel) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 && t.is_contiguous() &&
         !t.is_sparse() && t.numel() == numel;
}

// The same update with LibTorch's tensor operations, as its Adam::step and
// AdamW::step write it: for what the loop cannot take.
template <class Options, class State>
void tensor_update(torch::Tensor& p, torch::Tensor grad, const Options& options, State& state, bool decoupled) {
  const auto [beta1, beta2] = options.betas();
  const auto step = static_cast<double>(state.step());
  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  if (decoupled) {
    if (options.weight_decay() != 0) p.mul_(1 - options.lr() * options.weight_decay());
  } else if (options.weight_decay() != 0) {
    grad = grad.add(p, options.weight_decay());
  }
  state.exp_avg().mul_(beta1).add_(grad, 1 - beta1);
  state.exp_avg_sq().mul_(beta2).addcmul_(grad, grad, 1 - beta2);
  torch::Tensor second = state.exp_avg_sq();
  if (options.amsgrad()) {
    torch::max_out(state.max_exp_avg_sq(), state.exp_avg_sq(), state.max_exp_avg_sq());
    second = state.max_exp_avg_sq();
  }
  auto denom = (second.sqrt() / std::sqrt(bias_correction2)).add_(options.eps());
  p.addcdiv_(state.exp_avg(), denom, -options.lr() / bias_correction1);
}

template <class Options, class State>
torch::Tensor fused_step(torch::optim::Optimizer& optimizer, const torch::optim::Optimizer::LossClosure& closure,
                         bool decoupled) {
  torch::Tensor loss = {};
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  torch::NoGradGuard no_grad;
  for (auto& group : optimizer.param_groups()) {
    const auto& options = static_cast<const Options&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const torch::Tensor& grad = p.grad();
      if (grad.is_sparse()) throw std::invalid_argument("Adam does not support sparse gradients");
      // LibTorch's key for a parameter's state (models/state_format.cpp reads it so too).
      auto& slot = optimizer.state()[c10::guts::to_string(p.unsafeGetTensorImpl())];
      if (!slot) {
        auto fresh = std::make_unique<State>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        if (options.amsgrad()) fresh->max_exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& state = static_cast<State&>(*slot);
      state.step(state.step() + 1);
      const int64_t n = p.numel();
      if (options.amsgrad() || !contiguous_floats(p, n) || !contiguous_floats(grad, n) ||
          !contiguous_floats(state.exp_avg(), n) || !contiguous_floats(state.exp_avg_sq(), n)) {
        tensor_update(p, grad, options, state, decoupled);
        continue;
      }
      const auto [beta1, beta2] = options.betas();
      const AdamCoefficients c =
          adam_coefficients(options.lr(), beta1, beta2, options.eps(), options.weight_decay(), decoupled, state.step());
      float* param = p.data_ptr<float>();
      const float* g = grad.data_ptr<float>();
      float* m = state.exp_avg().template data_ptr<float>();
      float* v = state.exp_avg_sq().template data_ptr<float>();
      at::parallel_for(0, n, kGrainFloats, [&](int64_t begin, int64_t end) {
        adam_update(param + begin, g + begin, m + begin, v + begin, end - begin, c);
      });
    }
  }
  return loss;
}

}  // namespace

torch::Tensor FusedAdam::step(LossClosure closure) {
  return fused_step<torch::optim::AdamOptions, torch::optim::AdamParamState>(*this, closure, false);
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
  return fused_step<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(*this, closure, true);
}

}  // namespace cerebro::models
