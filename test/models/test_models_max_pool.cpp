// models/max_pool.hpp: the zoo's 2x2 max-pool gives torch::max_pool2d's
// outputs and gradients bit for bit (ties, NaNs, odd sizes, 3-d inputs,
// without autograd) and hands what its loops do not take to LibTorch.
#include <boost/test/unit_test.hpp>

#include <torch/torch.h>

#include <cstring>
#include <limits>

#include "models/max_pool.hpp"

namespace cerebro::models::testing {
namespace {

bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) return false;
  auto x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), x.numel() * x.element_size()) == 0;
}

// Forward and backward of ours and LibTorch's on `input`, with the same
// upstream gradient; each must equal the other's bits.
void check_against_libtorch(const torch::Tensor& input, const std::string& what) {
  auto ours_in = input.clone().requires_grad_();
  auto theirs_in = input.clone().requires_grad_();
  auto ours = max_pool2x2(ours_in);
  auto theirs = torch::max_pool2d(theirs_in, 2);
  BOOST_TEST(same_bits(ours, theirs), what << ": forward");
  auto upstream = torch::randn(theirs.sizes());
  ours.backward(upstream);
  theirs.backward(upstream);
  BOOST_TEST(same_bits(ours_in.grad(), theirs_in.grad()), what << ": backward");
  torch::NoGradGuard no_grad;
  BOOST_TEST(same_bits(max_pool2x2(input), theirs.detach()), what << ": without autograd");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(max_pool)

BOOST_AUTO_TEST_CASE(gives_libtorchs_outputs_and_gradients) {
  torch::manual_seed(11);
  // relu'd activations: many windows tie at 0 (the first wins).
  check_against_libtorch(torch::relu(torch::randn({8, 16, 28, 28})), "cnn-sized relu");
  check_against_libtorch(torch::randn({3, 5, 7, 9}), "odd sizes");
  check_against_libtorch(torch::randn({4, 6, 6}), "3-d");
  // Ties anywhere in the window, and windows of one value.
  check_against_libtorch(torch::randint(0, 3, {2, 3, 10, 10}).to(torch::kFloat32), "small integers");
  check_against_libtorch(torch::zeros({1, 2, 4, 4}), "all zero");
  check_against_libtorch(torch::full({1, 1, 2, 2}, std::numeric_limits<float>::infinity()), "+inf");
}

BOOST_AUTO_TEST_CASE(nans_win_as_in_libtorch) {
  torch::manual_seed(12);
  auto x = torch::randn({2, 3, 8, 8});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto flat = x.view({-1});
  for (int64_t i : {0, 5, 17, 18, 64, 65, 72, 73, 200, 301}) flat[i] = nan;  // windows with one and with two NaNs
  check_against_libtorch(x, "NaNs");
}

BOOST_AUTO_TEST_CASE(inputs_the_loops_do_not_take_go_to_libtorch) {
  torch::manual_seed(13);
  auto wide = torch::randn({2, 3, 6, 6}, torch::kFloat64).requires_grad_();
  auto out = max_pool2x2(wide);
  BOOST_TEST(out.scalar_type() == torch::kFloat64);
  BOOST_TEST(torch::equal(out, torch::max_pool2d(wide, 2)));
  // A channels-last input is taken (made contiguous first) with the same result.
  auto channels_last = torch::randn({2, 3, 6, 6}).contiguous(torch::MemoryFormat::ChannelsLast);
  BOOST_TEST(same_bits(max_pool2x2(channels_last), torch::max_pool2d(channels_last, 2).contiguous()));
  // Too small for a window: LibTorch's error, not an empty tensor.
  BOOST_CHECK_THROW(max_pool2x2(torch::randn({1, 1, 1, 4})), c10::Error);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace cerebro::models::testing
