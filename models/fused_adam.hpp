#pragma once
// Inside models/ only (it includes LibTorch): LibTorch's Adam and AdamW whose
// step() updates each parameter in one pass (models/adam_kernel.hpp says
// why and what it computes). Everything else is LibTorch's: options, state
// (AdamParamState, so checkpoints and models/state_format.cpp see an Adam),
// zero_grad, save and load. A parameter the loop cannot take (not a
// contiguous float tensor, or amsgrad on) is updated with LibTorch's tensor
// operations instead.
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

namespace cerebro::models {

class FusedAdam : public torch::optim::Adam {
 public:
  using torch::optim::Adam::Adam;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace cerebro::models
