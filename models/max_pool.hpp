#pragma once
// torch::max_pool2d(x, 2) for the zoo's models, through models/pool_kernel.hpp:
// the same outputs and gradients (see there for the one edge it differs on)
// at a fraction of LibTorch 1.13's cost on CPU (docs/BENCHMARKS.md, "Session
// 18"). Inputs the loops do not take (not float32, not on the CPU, not 3-d or
// 4-d) go to torch::max_pool2d.
#include <torch/torch.h>

namespace cerebro::models {

torch::Tensor max_pool2x2(const torch::Tensor& x);

}  // namespace cerebro::models
