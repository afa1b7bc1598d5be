// models/fused_adam.hpp: the one-pass Adam and AdamW take LibTorch's steps
// (the same parameters and moments, up to float rounding, over many steps,
// with and without weight decay), fall back to LibTorch's operations for a
// parameter the loop cannot take, keep LibTorch's state (an Adam to the
// state format), and are what configs train with; and
// models/flush_denormals.hpp, which training holds.
#include <boost/test/unit_test.hpp>

#include <torch/torch.h>

#include <limits>
#include <optional>

#include "models/adam_kernel.hpp"
#include "models/flush_denormals.hpp"
#include "models/fused_adam.hpp"
#include "models/trainee.hpp"
#include "test/models/test_models_util.hpp"

namespace cerebro::models::testing {
namespace {

// Parameters of the zoo cnn's kinds of shapes, small; the same values for both optimizers.
std::vector<torch::Tensor> parameters(uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> ps;
  for (auto shape : std::vector<std::vector<int64_t>>{{4, 1, 5, 5}, {4}, {16, 36}, {16}, {3, 16}, {3}, {1}})
    ps.push_back(torch::randn(shape).requires_grad_());
  return ps;
}

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& ps) {
  std::vector<torch::Tensor> out;
  for (const auto& p : ps) out.push_back(p.detach().clone().requires_grad_());
  return out;
}

// `steps` steps of both optimizers on the same gradients (a fresh random
// gradient per step, some large, some tiny); returns the largest difference
// of a parameter relative to its magnitude (at least 1).
double largest_difference(torch::optim::Optimizer& reference, std::vector<torch::Tensor>& reference_params,
                          torch::optim::Optimizer& fused, std::vector<torch::Tensor>& fused_params, int steps) {
  for (int step = 0; step < steps; ++step) {
    for (size_t i = 0; i < reference_params.size(); ++i) {
      auto g = torch::randn(reference_params[i].sizes()) * std::pow(10.0, (step % 5) - 2);
      reference_params[i].mutable_grad() = g.clone();
      fused_params[i].mutable_grad() = g.clone();
    }
    reference.step();
    fused.step();
  }
  double worst = 0;
  for (size_t i = 0; i < reference_params.size(); ++i) {
    auto diff = (reference_params[i] - fused_params[i]).abs() / reference_params[i].abs().clamp_min(1);
    worst = std::max(worst, diff.max().item<double>());
  }
  return worst;
}

// Float rounding in a sum of terms that cancel leaves an error relative to
// the terms, not to the (near zero) result: compare against the largest value.
bool close(const torch::Tensor& a, const torch::Tensor& b, double tolerance) {
  return (a - b).abs().max().item<double>() <= tolerance * a.abs().max().item<double>();
}

BOOST_AUTO_TEST_CASE(fused_adam_takes_libtorchs_steps) {
  for (double weight_decay : {0.0, 0.05}) {
    auto a = parameters(3);
    auto b = copies(a);
    torch::optim::Adam reference(a, torch::optim::AdamOptions(1e-2).weight_decay(weight_decay));
    FusedAdam fused(b, torch::optim::AdamOptions(1e-2).weight_decay(weight_decay));
    BOOST_TEST_CONTEXT("weight_decay " << weight_decay) {
      BOOST_TEST(largest_difference(reference, a, fused, b, 200) < 1e-5);
      // The moments and the step count too: the state a checkpoint keeps.
      for (size_t i = 0; i < a.size(); ++i) {
        auto key_a = c10::guts::to_string(a[i].unsafeGetTensorImpl());
        auto key_b = c10::guts::to_string(b[i].unsafeGetTensorImpl());
        auto& sa = static_cast<torch::optim::AdamParamState&>(*reference.state().at(key_a));
        auto& sb = static_cast<torch::optim::AdamParamState&>(*fused.state().at(key_b));
        BOOST_TEST(sa.step() == sb.step());
        BOOST_TEST(close(sa.exp_avg(), sb.exp_avg(), 1e-5));
        BOOST_TEST(close(sa.exp_avg_sq(), sb.exp_avg_sq(), 1e-5));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(fused_adamw_takes_libtorchs_steps) {
  for (double weight_decay : {0.0, 0.1}) {
    auto a = parameters(5);
    auto b = copies(a);
    torch::optim::AdamW reference(a, torch::optim::AdamWOptions(1e-2).weight_decay(weight_decay));
    FusedAdamW fused(b, torch::optim::AdamWOptions(1e-2).weight_decay(weight_decay));
    BOOST_TEST_CONTEXT("weight_decay " << weight_decay) {
      BOOST_TEST(largest_difference(reference, a, fused, b, 200) < 1e-5);
    }
  }
}

// A transposed parameter (not contiguous) and amsgrad go through LibTorch's
// own operations: the same steps, bit for bit.
BOOST_AUTO_TEST_CASE(what_the_loop_cannot_take_steps_as_libtorch_does) {
  auto base = torch::randn({6, 5});
  std::vector<torch::Tensor> a{base.clone().t().requires_grad_()}, b{base.clone().t().requires_grad_()};
  BOOST_REQUIRE(!b[0].is_contiguous());
  torch::optim::Adam reference(a, torch::optim::AdamOptions(1e-2));
  FusedAdam fused(b, torch::optim::AdamOptions(1e-2));
  BOOST_TEST(largest_difference(reference, a, fused, b, 20) == 0.0);

  auto c = parameters(7);
  auto d = copies(c);
  torch::optim::Adam amsgrad_reference(c, torch::optim::AdamOptions(1e-2).amsgrad(true));
  FusedAdam amsgrad(d, torch::optim::AdamOptions(1e-2).amsgrad(true));
  BOOST_TEST(largest_difference(amsgrad_reference, c, amsgrad, d, 20) == 0.0);
}

// The loop's terms that are off are left out, not multiplied by zero: an
// infinite parameter stays infinite (LibTorch's result), not NaN.
BOOST_AUTO_TEST_CASE(the_loop_leaves_out_a_zero_weight_decay) {
  float param[2] = {std::numeric_limits<float>::infinity(), 1.0f};
  const float grad[2] = {0.5f, 0.5f};
  float m[2] = {0, 0}, v[2] = {0, 0};
  adam_update(param, grad, m, v, 2, adam_coefficients(1e-3, 0.9, 0.999, 1e-8, 0, false, 1));
  BOOST_TEST(std::isinf(param[0]));
  BOOST_TEST(param[1] < 1.0f);
  // A parameter's first step moves it by about lr, against its gradient's sign.
  BOOST_TEST(std::abs(param[1] - (1.0f - 1e-3f)) < 1e-6f);
}

// models/flush_denormals.hpp: denormals read and come out as zero inside the
// scope, and the thread's mode is back after it.
BOOST_AUTO_TEST_CASE(a_flush_denormals_scope_flushes_and_restores) {
  volatile float denormal = 1e-39f;  // below FLT_MIN: denormal
  volatile float one = 1.0f;
  BOOST_REQUIRE(!FlushDenormalsScope::active());
  BOOST_TEST(denormal * one != 0.0f);
  {
    const FlushDenormalsScope scope;
    BOOST_TEST(FlushDenormalsScope::active());
    BOOST_TEST(denormal * one == 0.0f);
    {
      const FlushDenormalsScope nested;
      BOOST_TEST(FlushDenormalsScope::active());
    }
    BOOST_TEST(FlushDenormalsScope::active());
  }
  BOOST_TEST(!FlushDenormalsScope::active());
  BOOST_TEST(denormal * one != 0.0f);
}

// Why training flushes: a moment whose gradient went to zero decays into the
// denormal range (slow to compute with) unless flushed, then it is zero.
BOOST_AUTO_TEST_CASE(adams_moment_of_a_silent_parameter_ends_zero_when_flushed) {
  auto moment_after_silence = [](bool flush) {
    std::vector<torch::Tensor> p{torch::ones({8}).requires_grad_()};
    FusedAdam adam(p, torch::optim::AdamOptions(1e-3));
    p[0].mutable_grad() = torch::ones({8});
    adam.step();
    p[0].mutable_grad() = torch::zeros({8});
    std::optional<FlushDenormalsScope> scope;
    if (flush) scope.emplace();
    for (int step = 0; step < 900; ++step) adam.step();  // 0.1 * 0.9^900: about 1e-42
    auto key = c10::guts::to_string(p[0].unsafeGetTensorImpl());
    return static_cast<torch::optim::AdamParamState&>(*adam.state().at(key)).exp_avg()[0].item<float>();
  };
  const float unflushed = moment_after_silence(false);
  BOOST_TEST(unflushed > 0.0f);
  BOOST_TEST(unflushed < std::numeric_limits<float>::min());  // denormal
  BOOST_TEST(moment_after_silence(true) == 0.0f);
}

BOOST_AUTO_TEST_CASE(configs_train_with_the_fused_optimizers) {
  const ShapeInfo shape{{20}, 3};
  auto adam = detail::build(nlohmann::json::parse(R"({"model": "mlp", "hidden": [8]})"), shape);
  BOOST_TEST(dynamic_cast<FusedAdam*>(adam.optimizer.get()) != nullptr);
  auto adamw = detail::build(nlohmann::json::parse(R"({"model": "mlp", "hidden": [8], "optimizer": "adamw"})"), shape);
  BOOST_TEST(dynamic_cast<FusedAdamW*>(adamw.optimizer.get()) != nullptr);
}

}  // namespace
}  // namespace cerebro::models::testing
