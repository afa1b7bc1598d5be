#pragma once
// The image encoder the zoo's captioner and detector share: per entry of `channels` a stride-2 3x3
// convolution, batch norm and relu, each optionally followed by a residual block of two 3x3 convolutions
// with batch norm (a resnet stage). Each stage halves the image's sides, rounding up.

#include <string>
#include <vector>

#include "models/model.hpp"

namespace cerebro::models {

class ConvStages {
 public:
  ConvStages() = default;
  // Registers the stages' modules with `owner` as stage<i>_conv, stage<i>_norm, stage<i>_residual1, ...
  ConvStages(torch::nn::Module& owner, int64_t in_channels, const std::vector<int64_t>& channels, bool residual);
  torch::Tensor forward(torch::Tensor x) const;
  // TorchScript lines that apply the stages to the variable `x` in place (the owner's attributes).
  std::string script(const std::string& x) const;
  // The side after the stages of a side of `side` pixels.
  int64_t reduced(int64_t side) const;
  int64_t out_channels() const { return out_channels_; }

 private:
  struct Stage {
    torch::nn::Conv2d conv{nullptr}, residual1{nullptr}, residual2{nullptr};
    torch::nn::BatchNorm2d norm{nullptr}, residual_norm1{nullptr}, residual_norm2{nullptr};
  };
  std::vector<Stage> stages_;
  int64_t out_channels_ = 0;
};

}  // namespace cerebro::models
