#include "models/augmentation.hpp"

#include <vector>

namespace cerebro::models {

torch::Tensor augment_batch(const torch::Tensor& batch, const datasets::Augmentation& a, at::Generator& generator) {
  torch::NoGradGuard no_grad;
  const int64_t n = batch.size(0);
  torch::Tensor out = batch;
  if (a.random_crop && a.crop_padding > 0) {
    const int64_t p = a.crop_padding, h = batch.size(2), w = batch.size(3);
    auto padded = torch::constant_pad_nd(batch, {p, p, p, p}, 0);
    auto offsets = torch::randint(0, 2 * p + 1, {n, 2}, generator, torch::kInt64);
    auto at = offsets.accessor<int64_t, 2>();
    std::vector<torch::Tensor> crops;
    crops.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      crops.push_back(padded[i].slice(1, at[i][0], at[i][0] + h).slice(2, at[i][1], at[i][1] + w));
    out = torch::stack(crops);
  }
  if (a.hflip) {
    auto flip = torch::rand({n}, generator).lt(0.5).view({n, 1, 1, 1});
    out = torch::where(flip, out.flip({3}), out);
  }
  return out.contiguous();
}

}  // namespace cerebro::models
